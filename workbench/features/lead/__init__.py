"""What the lead pages show that no other feature computes: the coverage-agreement curve of selective judging."""
