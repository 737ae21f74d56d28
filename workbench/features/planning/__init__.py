"""How many more labels each undecided gate check needs, and the active queue that serves them first."""
