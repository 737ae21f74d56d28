"""The results board: several models graded on the same items by approved judges, ranked with intervals."""
