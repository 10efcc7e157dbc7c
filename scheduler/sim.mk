# The simulator (scheduler/sim): pure Python, so `make test` needs nothing built for it.
# Its tests live in tests/sim and run with everything else under pytest.

SWIM_DIR ?= ../shared/data/swim
SWIM_TRACE ?= $(SWIM_DIR)/FB-2010_samples_24_times_1hr_0.tsv

.PHONY: sim-bench sim-bench-swim

# The DRF-paper and HDRF-paper scenarios and the late queue with and without preemption (seconds).
sim-bench: venv
	$(PY) benchmarks/sim/paper_scenarios.py
	$(PY) benchmarks/sim/preemption_late_queue.py

# FB-2010 replayed on 400 nodes under drf, slots and fair-memory (a few minutes per policy).
sim-bench-swim: venv
	$(PY) benchmarks/sim/swim_fb2010.py $(SWIM_TRACE)
