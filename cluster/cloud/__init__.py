"""Ray: joining a cluster or starting a local one, its health, the actors that play shards and the pool's actors
(start, loss, GPUs). Imports the run's files (cluster.runs) and nothing above it."""
