"""The run loop: the coordinator and its parts (the course of a search, the pool of shards in flight, the
recorder and the shard writer, the run's files as a session sees them, the report, audits, the progress view).
Imports cluster.runs and cluster.cloud, never the commands."""
