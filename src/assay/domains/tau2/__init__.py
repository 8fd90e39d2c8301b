"""Ports of tau2-bench (Sierra Research, MIT) domains, reading tau2 data folders at run time."""
