"""A run's files and tables, the bottom of the cluster: the config and its plan, the store (a folder or an object
store) and the run's lease, run.json, the shard summaries and figures, the run's totals, the tables and the own
tables (the atlas, construct's genes), the catalogue's labels, compaction. Nothing here imports the rest of the
cluster (tests/test_repository.py)."""
