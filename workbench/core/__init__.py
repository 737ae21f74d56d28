"""The shared vocabulary: errors, names, the scale, typed records, hashing, inputs and formats, the gate policy and
the workspace. Imports nothing of workbench outside itself."""
