"""The model providers behind one interface, each imported only when a judge of its prefix is made."""
