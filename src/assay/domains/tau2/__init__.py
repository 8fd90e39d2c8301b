"""tau2-bench's airline, retail, telecom and mock domains, ported to assay."""
