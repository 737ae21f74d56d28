"""Selective judging: a judge keeps the items it is confident about, with a guarantee on its agreement with the
humans there, and abstains on (or escalates) the rest."""
