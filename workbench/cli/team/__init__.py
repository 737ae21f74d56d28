"""Commands of a team's workbench: who may do what (`workbench rater`), and who did what (`workbench audit`)."""
