"""Kernel test harness: case records, NumPy expectations, host driver and target runs."""
