"""The cloud launch files: a Ray cluster launcher YAML (AWS) and a KubeRay RayJob."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from cluster.cli import build_parser, protect_positionals
from cluster.commands.search import config_from_args

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def test_cluster_launcher_yaml_passes_rays_schema():
    from ray.autoscaler._private.util import fillout_defaults, validate_config

    config = yaml.safe_load((CONFIGS / "cluster-aws.yaml").read_text())
    validate_config(fillout_defaults(config))
    assert config["provider"]["type"] == "aws"
    assert config["available_node_types"]["head"]["resources"] == {"CPU": 0}
    assert any("pip install -e ~/bmn" in c for c in config["setup_commands"])


def test_rayjob_manifest_runs_a_valid_search():
    job = yaml.safe_load((CONFIGS / "rayjob.yaml").read_text())
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    argv = shlex.split(job["spec"]["entrypoint"])
    assert argv[:2] == ["bmn", "search"]
    parser = build_parser()
    args = parser.parse_args(protect_positionals(parser, argv[1:]))
    args.config = str(CONFIGS.parent / args.config)
    config = config_from_args(args)
    assert config.out.startswith("s3://")
    spec = job["spec"]["rayClusterSpec"]
    head_image = spec["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
    worker_images = {g["template"]["spec"]["containers"][0]["image"] for g in spec["workerGroupSpecs"]}
    assert worker_images == {head_image}
    dockerfile = (CONFIGS / "Dockerfile").read_text()
    assert f"rayproject/ray:{spec['rayVersion']}-" in dockerfile
