"""Parts several pages show: the label plan (calibration), the robustness probes (calibration) and the trajectory
viewer (label, adjudicate, board)."""
