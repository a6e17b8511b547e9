"""The 2-state MDP of Section 6.1 and Appendix A: exact values, the tiny PVN, the experiment."""
