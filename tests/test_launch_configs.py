"""The cloud launch files: one image (configs/Dockerfile) run by the Ray cluster launcher
(configs/cluster-aws.yaml) and by KubeRay (configs/rayjob.yaml), the head's IAM policy, the
Kubernetes service accounts, and the documentation of all of it (docs/cloud.md, the cloud guide; docs/gpu.md
and README.md name the image's paths too).

Everything here reads files, except the last test, which builds the image when a Docker daemon
is at hand."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import shutil
import subprocess
import tomllib
import urllib.parse
from pathlib import Path, PurePosixPath

import aws_policy
import pytest
import yaml

from cluster.commands.cli import build_parser, protect_positionals
from cluster.commands.search import config_from_args

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
DOCKERFILE = CONFIGS / "Dockerfile"
LAUNCH_FILES = [CONFIGS / "cluster-aws.yaml", CONFIGS / "rayjob.yaml", CONFIGS / "k8s-service-accounts.yaml",
                CONFIGS / "k8s-network-policy.yaml", DOCKERFILE, CONFIGS / "aws-head-policy.json"]
GUIDE = ROOT / "docs" / "cloud.md"  # the cloud guide: the launchers step by step
# Every document that may name the image, its paths or a job's command.
DOCUMENTS = [ROOT / "README.md", GUIDE, ROOT / "docs" / "gpu.md"]
STATIC_AWS_KEYS = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}


def launcher() -> dict:
    return yaml.safe_load((CONFIGS / "cluster-aws.yaml").read_text())


def rayjob() -> dict:
    return yaml.safe_load((CONFIGS / "rayjob.yaml").read_text())


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def pinned_ray() -> str:
    pins = [re.fullmatch(r"ray\[default\]==([0-9.]+)", d.split("#")[0].strip())
            for d in pyproject()["project"]["dependencies"] if d.startswith("ray")]
    assert len(pins) == 1 and pins[0], "pyproject.toml pins Ray exactly: ray[default]==X.Y.Z"
    return pins[0].group(1)


def image_tag() -> str:
    """The one image's name: ghcr.io/YOUR-ORG/bmn:<the version in pyproject.toml>."""
    return f"ghcr.io/YOUR-ORG/bmn:{pyproject()['project']['version']}"


def pod_specs(job: dict) -> dict[str, dict]:
    spec = job["spec"]
    pods = {"head": spec["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]}
    for group in spec["rayClusterSpec"]["workerGroupSpecs"]:
        pods[f"worker group {group['groupName']}"] = group["template"]["spec"]
    if "submitterPodTemplate" in spec:
        pods["submitter"] = spec["submitterPodTemplate"]["spec"]
    return pods


def containers(pod: dict) -> list[dict]:
    return list(pod.get("initContainers", [])) + list(pod["containers"])


def dockerfile_layout() -> tuple[dict[PurePosixPath, Path], dict[str, str]]:
    """What the Dockerfile puts where: {path in the image: path in the repository}, and its ENV."""
    layout: dict[PurePosixPath, Path] = {}
    env: dict[str, str] = {}
    workdir = PurePosixPath("/")
    for line in DOCKERFILE.read_text().replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        op, args = words[0].upper(), [w for w in words[1:] if not w.startswith("--")]
        if op == "WORKDIR":
            workdir = workdir / args[0]
        elif op == "ENV":
            env.update(a.split("=", 1) for a in args)
        elif op == "COPY":
            *sources, dest = args
            target = workdir / dest
            for source in sources:
                if len(sources) > 1 or dest.endswith("/"):
                    layout[target / PurePosixPath(source).name] = ROOT / source
                else:
                    layout[target] = ROOT / source
    return layout, env


def repo_path_of(image_path: str) -> Path | None:
    """The repository file that the image has at `image_path`, or None if the image has none there."""
    path = PurePosixPath(image_path)
    layout, _ = dockerfile_layout()
    for inside, source in layout.items():
        if path == inside or inside in path.parents:
            return source / path.relative_to(inside)
    return None


# --- the Ray cluster launcher -------------------------------------------------------------------

def test_cluster_launcher_yaml_passes_rays_schema():
    from ray.autoscaler._private.util import fillout_defaults, validate_config

    config = launcher()
    validate_config(fillout_defaults(config))
    assert config["provider"]["type"] == "aws"
    assert config["provider"]["region"]
    assert config["available_node_types"]["head"]["resources"] == {"CPU": 0}
    # Reproducible nodes: nothing is installed when a node boots, every node names its AMI.
    assert not config.get("setup_commands") and not config.get("head_setup_commands") \
        and not config.get("worker_setup_commands")
    assert not any("pip install" in c for c in config.get("initialization_commands", []))
    for name, node_type in config["available_node_types"].items():
        image = node_type["node_config"].get("ImageId", "")
        assert image.startswith(("ami-", "resolve:ssm:/aws/service/")), name


def test_head_keeps_the_autoscalers_rights_and_workers_get_no_bucket():
    config = launcher()
    head = config["available_node_types"]["head"]["node_config"]["IamInstanceProfile"]["Name"]
    worker = config["available_node_types"]["workers"]["node_config"]["IamInstanceProfile"]["Name"]
    assert head != worker
    assert "aws-head-policy.json" in (CONFIGS / "cluster-aws.yaml").read_text()
    policy = json.loads((CONFIGS / "aws-head-policy.json").read_text())
    allowed: dict[str, list] = {}
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for action in actions:
            allowed.setdefault(action, []).append((resources, statement.get("Condition")))
    for action in ("ec2:RunInstances", "ec2:TerminateInstances", "ec2:DescribeInstances",
                   "ec2:DescribeInstanceTypes", "ec2:CreateTags", "iam:PassRole",
                   "s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject"):
        assert action in allowed, f"the head's policy lacks {action}"
    # The head passes exactly the workers' role, and terminates only this cluster's nodes.
    assert all(r.endswith(f"/{worker}") for resources, _ in allowed["iam:PassRole"] for r in resources)
    for _, condition in allowed["ec2:TerminateInstances"]:
        assert condition["StringEquals"]["ec2:ResourceTag/ray-cluster-name"] == config["cluster_name"]
    assert not any(a == "*" or a.endswith(":*") for a in allowed)


def test_launcher_runs_the_image_with_token_auth_on_every_node():
    config = launcher()
    docker = config["docker"]
    assert docker["image"] == image_tag()
    assert not {"head_image", "worker_image"} & set(docker)
    for node in ("head", "worker"):
        options = " ".join(docker.get("run_options", []) + docker.get(f"{node}_run_options", []))
        assert re.search(r"(--env|-e)[ =]RAY_AUTH_MODE=token\b", options), node
        assert not re.search(r"(^| )(-p|--publish)\b", options), "no ports published from the container"
    assert config["file_mounts"].get("~/.ray/auth_token") == "~/.ray/auth_token"
    commands = config["head_start_ray_commands"] + config["worker_start_ray_commands"]
    assert not any("dashboard-host" in c for c in commands)
    assert any("warm_kernels.py" in c for c in config["worker_start_ray_commands"])


# --- KubeRay -------------------------------------------------------------------------------------

def test_every_document_the_configs_cite_exists():
    cited = set()
    for path in CONFIGS.iterdir():
        if path.is_file():
            cited |= set(re.findall(r"\b([A-Z][A-Z_]+\.md)\b", path.read_text(errors="replace")))
    missing = sorted(name for name in cited if not (CONFIGS.parent / name).exists())
    assert not missing, f"configs cite {missing}, which do not exist"


def test_rayjob_has_what_kuberay_requires():
    job = rayjob()
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    assert job["metadata"]["name"]
    spec = job["spec"]
    assert spec["entrypoint"].strip()
    assert spec["shutdownAfterJobFinishes"] is True
    assert 0 < spec["ttlSecondsAfterFinished"] <= 600
    assert 0 < spec["activeDeadlineSeconds"] <= 30 * 24 * 3600  # no job runs (and bills) for ever
    cluster = spec["rayClusterSpec"]
    assert cluster["rayVersion"] == pinned_ray()
    assert cluster["headGroupSpec"]["template"]["spec"]["containers"]
    assert cluster["workerGroupSpecs"]
    for group in cluster["workerGroupSpecs"]:
        assert group["groupName"] and group["template"]["spec"]["containers"]
        assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    assert "dashboard-host" not in cluster["headGroupSpec"].get("rayStartParams", {})


def test_rayjob_uses_token_auth_and_workload_identity():
    job = rayjob()
    cluster = job["spec"]["rayClusterSpec"]
    token_by_operator = cluster.get("authOptions", {}).get("mode") == "token"
    accounts = {d["metadata"]["name"]: d for d in
                yaml.safe_load_all((CONFIGS / "k8s-service-accounts.yaml").read_text())
                if d and d.get("kind") == "ServiceAccount"}
    for name, pod in pod_specs(job).items():
        assert pod.get("serviceAccountName") in accounts, f"{name}: a service account of k8s-service-accounts.yaml"
        for container in containers(pod):
            env = {e["name"]: e for e in container.get("env", [])}
            assert not STATIC_AWS_KEYS & set(env), f"{name}: no static AWS keys"
            assert not container.get("envFrom"), f"{name}: no environment from Secrets"
            if not token_by_operator and container["name"].startswith("ray-"):
                assert env.get("RAY_AUTH_MODE", {}).get("value") == "token", name
    head_account = accounts[pod_specs(job)["head"]["serviceAccountName"]]
    assert "eks.amazonaws.com/role-arn" in head_account["metadata"].get("annotations", {})
    for name, pod in pod_specs(job).items():
        if name != "head":  # only the driver, on the head, writes the bucket
            assert not accounts[pod["serviceAccountName"]]["metadata"].get("annotations"), name


def test_rayjob_warms_the_kernels_into_the_cache_the_workers_read():
    _, env = dockerfile_layout()
    cache = PurePosixPath(env["NUMBA_CACHE_DIR"])
    for group in rayjob()["spec"]["rayClusterSpec"]["workerGroupSpecs"]:
        pod = group["template"]["spec"]
        volumes = {v["name"] for v in pod.get("volumes", []) if "emptyDir" in v}
        warm = [c for c in pod.get("initContainers", []) if "warm_kernels.py" in " ".join(c.get("command", []))]
        assert warm, group["groupName"]
        for container in warm + [pod["containers"][0]]:
            mounts = [m for m in container.get("volumeMounts", []) if m["name"] in volumes]
            assert any(PurePosixPath(m["mountPath"]) in cache.parents for m in mounts), container["name"]


# --- the one image -------------------------------------------------------------------------------

def test_one_immutable_image_everywhere():
    """One image, tagged with the version, wherever CPUs run shards; its GPU build (the same Dockerfile,
    tagged VERSION-gpu) exactly where GPUs are asked for."""
    tag = image_tag()
    gpu_tag = f"{tag}-gpu"
    config = launcher()
    images = {"cluster-aws.yaml docker.image": config["docker"]["image"]}
    gpu_images = {}
    for name, node_type in config["available_node_types"].items():
        worker_image = node_type.get("docker", {}).get("worker_image")
        if node_type["resources"].get("GPU"):
            gpu_images[f"cluster-aws.yaml {name}"] = worker_image
            assert "--gpus all" in node_type["docker"]["worker_run_options"], name
        else:
            assert worker_image is None, name
    for name, pod in pod_specs(rayjob()).items():
        for container in containers(pod):
            asks_gpu = "nvidia.com/gpu" in container.get("resources", {}).get("limits", {})
            pod_gpu = any("nvidia.com/gpu" in c.get("resources", {}).get("limits", {}) for c in pod["containers"])
            where = gpu_images if pod_gpu else images
            where[f"rayjob.yaml {name} {container['name']}"] = container["image"]
            assert not asks_gpu or pod_gpu
    assert set(images.values()) == {tag}, images
    assert gpu_images and set(gpu_images.values()) == {gpu_tag}, gpu_images
    dockerfile = DOCKERFILE.read_text()
    assert f"-t {tag} ." in dockerfile, "the Dockerfile's build command tags the image the launchers run"
    assert f"ARG BMN_VERSION={pyproject()['project']['version']}" in dockerfile
    for path in LAUNCH_FILES + [ROOT / "Makefile"] + DOCUMENTS:
        assert not re.search(r"[\w.-]:latest\b", path.read_text()), f"{path.name} names a :latest image"


def test_ray_and_python_versions_agree():
    ray = pinned_ray()
    assert importlib.metadata.version("ray") == ray, "the installed Ray is the pinned one"
    assert pyproject()["project"]["requires-python"] == ">=3.11"
    base = re.search(r"^FROM\s+(\S+)", DOCKERFILE.read_text(), re.M).group(1)
    found = re.fullmatch(r"rayproject/ray:([0-9.]+)-py3(\d+)-\$\{RAY_FLAVOUR\}@\$\{RAY_BASE_DIGEST\}", base)
    assert found, base
    # The CPU image by default; the GPU image (make image-gpu) on Ray's CUDA base of the same version.
    assert re.search(r"^ARG RAY_FLAVOUR=cpu$", DOCKERFILE.read_text(), re.M)
    assert re.search(r"^GPU_FLAVOUR = cu12\d$", (ROOT / "Makefile").read_text(), re.M)
    assert found.group(1) == ray == rayjob()["spec"]["rayClusterSpec"]["rayVersion"]
    assert int(found.group(2)) >= 11
    assert f"'{ray}'" in DOCKERFILE.read_text(), "the build checks the image's Ray"


def test_dockerignore_keeps_local_state_out_of_the_build():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    for entry in (".venv", ".git", "runs"):
        assert entry in ignored
    assert {"__pycache__", "**/__pycache__"} & ignored
    assert {"*.egg-info", "**/*.egg-info"} & ignored
    assert any(".ipynb_checkpoints" in e for e in ignored)


def test_paths_named_in_the_image_exist_at_that_place():
    """Every /home/ray/bmn/... path the launchers and documents name is a file the image has."""
    layout, _ = dockerfile_layout()
    assert all(source.exists() for source in layout.values()), layout
    named = set()
    for path in LAUNCH_FILES + [CONFIGS / "cluster.toml"] + DOCUMENTS:
        named |= set(re.findall(r"/home/ray/bmn/[\w./-]*\w", path.read_text()))
    assert named
    for image_path in sorted(named):
        source = repo_path_of(image_path)
        assert source is not None and source.exists(), f"{image_path} is not in the image"


def test_job_commands_run_a_valid_search_from_any_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no working directory to lean on
    commands = [rayjob()["spec"]["entrypoint"]]
    for text in [(CONFIGS / "cluster-aws.yaml").read_text()] + [doc.read_text() for doc in DOCUMENTS]:
        commands += re.findall(r"-- (bmn search [^\n`]*)", text.replace("\\\n", " "))
    assert len(commands) >= 3
    parser = build_parser()
    for command in commands:
        argv = shlex.split(command)
        assert argv[:2] == ["bmn", "search"]
        args = parser.parse_args(protect_positionals(parser, argv[1:]))
        assert args.config.startswith("/home/ray/bmn/"), f"an absolute path in the image: {command}"
        args.config = str(repo_path_of(args.config))
        assert config_from_args(args).out.startswith("s3://"), command


def test_no_public_listeners():
    for path in LAUNCH_FILES:
        assert "0.0.0.0" not in path.read_text(), path.name


def test_cloud_guide_covers_both_launchers():
    guide = GUIDE.read_text()
    for needed in ("ray up configs/cluster-aws.yaml", "ray dashboard configs/cluster-aws.yaml",
                   "ray job submit --no-wait", "ray job logs -f", "ray get-auth-token", "RAY_AUTH_MODE=token",
                   "kubectl apply -f configs/rayjob.yaml", "bmn resume", "max_workers", "region"):
        assert needed in guide, needed


# --- secure defaults -----------------------------------------------------------------------------

REGION_KEY = "aws:RequestedRegion"


def head_policy() -> dict:
    return aws_policy.load(CONFIGS / "aws-head-policy.json")


def test_nodes_use_the_users_security_group_not_rays_open_default(monkeypatch):
    """Ray makes a group admitting SSH from 0.0.0.0/0 for any node type without SecurityGroupIds;
    run through Ray's own code, this config makes none (it never reaches AWS to make one)."""
    from ray.autoscaler._private.aws import config as aws_config
    from ray.autoscaler._private.util import fillout_defaults

    config = launcher()
    groups = {name: node_type["node_config"].get("SecurityGroupIds")
              for name, node_type in config["available_node_types"].items()}
    assert all(groups.values()), groups
    assert len({tuple(g) for g in groups.values()}) == 1, "head and workers share one group"
    assert "security_group" not in config["provider"], "no rules added to a group Ray makes"

    def no_aws(*args, **kwargs):
        raise AssertionError("Ray would make its own security group")

    monkeypatch.setattr(aws_config, "_upsert_security_groups", no_aws)
    aws_config._configure_security_group(fillout_defaults(config))
    # The guide says how to make the group: SSH from the user's address, all traffic within it.
    guide = GUIDE.read_text().replace("\\\n", " ")
    ssh = re.search(r"aws ec2 authorize-security-group-ingress [^\n]*--port 22 [^\n]*", guide).group(0)
    assert '--cidr "$MY_IP/32"' in ssh and "0.0.0.0" not in guide
    assert re.search(r'authorize-security-group-ingress --group-id "\$SG" --source-group "\$SG"', guide)
    assert "sg-YOUR-GROUP" in guide


def test_nodes_require_imdsv2():
    for name, node_type in launcher()["available_node_types"].items():
        options = node_type["node_config"].get("MetadataOptions", {})
        assert options.get("HttpTokens") == "required", name
        assert options.get("HttpEndpoint", "enabled") == "enabled", name
        # The instance role is read from inside the container, one hop beyond the host.
        assert options.get("HttpPutResponseHopLimit", 1) >= 2, name


def test_nodes_boot_a_current_ami_with_docker_that_the_head_may_resolve():
    from ray.autoscaler._private.aws.config import DEFAULT_AMI

    config = launcher()
    region = config["provider"]["region"]
    policy = head_policy()
    for name, node_type in config["available_node_types"].items():
        image = node_type["node_config"]["ImageId"]
        assert image not in DEFAULT_AMI.values(), f"{name}: Ray's default AMI is Ubuntu 18.04, out of support"
        parameter = image.removeprefix("resolve:ssm:")
        assert re.fullmatch(r"/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-"
                            r"(2[4-9]|[3-9]\d)\.04/latest/ami-id", parameter), image
        if name != config["head_node_type"]:  # the head starts workers, resolving the parameter
            arn = f"arn:aws:ssm:{region}::parameter{parameter}"
            assert aws_policy.allows(policy, "ssm:GetParameters", arn), arn


def run_instances(config: dict, node_type: str, **changes) -> dict[str, dict]:
    """The resources and condition keys of the RunInstances call the autoscaler makes for a worker
    of `node_type` (as ray.autoscaler's AWS node provider builds it), with `changes` applied."""
    node = config["available_node_types"][node_type]["node_config"]
    region = changes.get("region", config["provider"]["region"])
    request = {REGION_KEY: region,
               "aws:RequestTag/ray-cluster-name": changes.get("tag", config["cluster_name"]),
               "ec2:InstanceType": changes.get("instance_type", node["InstanceType"]),
               "ec2:MetadataHttpTokens": changes.get("http_tokens", node["MetadataOptions"]["HttpTokens"])}
    account = "ACCOUNT_ID"
    resources = {f"arn:aws:ec2:{region}:{account}:instance/i-0": request}
    for kind in ("subnet", "network-interface", "security-group", "volume"):
        resources[f"arn:aws:ec2:{region}:{account}:{kind}/x-0"] = {REGION_KEY: region}
    if node.get("InstanceMarketOptions", {}).get("MarketType") == "spot":
        resources[f"arn:aws:ec2:{region}:{account}:spot-instances-request/sir-0"] = {REGION_KEY: region}
    resources[f"arn:aws:ec2:{region}::image/ami-0"] = {REGION_KEY: region,
                                                       "ec2:Owner": changes.get("owner", "amazon")}
    return resources


def test_head_may_start_only_this_clusters_workers():
    config = launcher()
    policy = head_policy()
    workers = [n for n in config["available_node_types"] if n != config["head_node_type"]]
    assert workers

    def allowed(resources):
        return all(aws_policy.allows(policy, "ec2:RunInstances", arn, context)
                   for arn, context in resources.items())

    for worker in workers:
        assert allowed(run_instances(config, worker)), worker
    worker = workers[0]
    head_type = config["available_node_types"][config["head_node_type"]]["node_config"]["InstanceType"]
    for change in ({"instance_type": "p5.48xlarge"}, {"instance_type": head_type}, {"region": "ap-south-1"},
                   {"tag": "someone-else"}, {"http_tokens": "optional"}, {"owner": "123456789012"}):
        assert not allowed(run_instances(config, worker, **change)), change


def test_driver_lists_and_writes_only_under_the_runs_prefix():
    policy = head_policy()
    outs = [rayjob()["spec"]["entrypoint"]]
    for text in [(CONFIGS / "cluster-aws.yaml").read_text()] + [doc.read_text() for doc in DOCUMENTS]:
        outs += re.findall(r"-- bmn search [^\n`]*", text.replace("\\\n", " "))
    for command in outs:
        out = urllib.parse.urlparse(re.search(r"--out (\S+)", command).group(1))
        prefix = out.path.lstrip("/") + "/"
        bucket = f"arn:aws:s3:::{out.netloc}"
        assert aws_policy.allows(policy, "s3:ListBucket", bucket, {"s3:prefix": prefix + "shards/"}), command
        assert aws_policy.allows(policy, "s3:PutObject", f"{bucket}/{prefix}run.json"), command
    bucket = "arn:aws:s3:::YOUR-BUCKET"
    for prefix in (None, "", "other/", "bm"):
        context = {} if prefix is None else {"s3:prefix": prefix}
        assert not aws_policy.allows(policy, "s3:ListBucket", bucket, context), prefix
    assert not aws_policy.allows(policy, "s3:GetObject", f"{bucket}/other/secret")
    assert not aws_policy.allows(policy, "s3:ListBucket", "arn:aws:s3:::another-bucket", {"s3:prefix": "bmn/"})


def network_policy() -> dict:
    [policy] = [d for d in yaml.safe_load_all((CONFIGS / "k8s-network-policy.yaml").read_text()) if d]
    return policy


def pod_labels(job: dict) -> dict[str, dict]:
    spec = job["spec"]
    templates = {"head": spec["rayClusterSpec"]["headGroupSpec"]["template"],
                 "submitter": spec["submitterPodTemplate"]}
    for group in spec["rayClusterSpec"]["workerGroupSpecs"]:
        templates[f"worker group {group['groupName']}"] = group["template"]
    return {name: t.get("metadata", {}).get("labels", {}) for name, t in templates.items()}


def test_network_policy_confines_every_pod_of_the_job():
    policy = network_policy()
    assert (policy["apiVersion"], policy["kind"]) == ("networking.k8s.io/v1", "NetworkPolicy")
    spec = policy["spec"]
    selector = spec["podSelector"]["matchLabels"]
    assert selector and set(spec["policyTypes"]) == {"Ingress", "Egress"}
    for name, labels in pod_labels(rayjob()).items():
        assert selector.items() <= labels.items(), f"{name} is not selected by the network policy"
    # In: only the job's own pods, and the operator on the dashboard port alone.
    for rule in spec["ingress"]:
        assert rule.get("from"), "an ingress rule open to every source"
        for peer in rule["from"]:
            assert "ipBlock" not in peer
            labels = peer["podSelector"]["matchLabels"]
            if labels != selector:
                assert labels == {"app.kubernetes.io/name": "kuberay-operator"}, labels
                assert [p["port"] for p in rule["ports"]] == [8265]
    # Out: the job's pods, DNS, HTTPS, and the Pod Identity agent's one address.
    for rule in spec["egress"]:
        ports = sorted({p["port"] for p in rule.get("ports", [])})
        peers = rule.get("to", [])
        if not peers:
            assert ports == [443], rule
        for peer in peers:
            if "ipBlock" in peer:
                assert peer["ipBlock"]["cidr"].endswith("/32") and ports == [80], rule
            elif peer.get("podSelector", {}).get("matchLabels") != selector:
                assert ports == [53], rule


def test_pods_run_unprivileged_without_api_tokens():
    job = rayjob()
    for name, pod in pod_specs(job).items():
        assert pod.get("automountServiceAccountToken") is False, name
        security = pod.get("securityContext", {})
        assert security.get("runAsNonRoot") is True and security.get("runAsUser", 0) != 0, name
        assert security.get("seccompProfile", {}).get("type") == "RuntimeDefault", name
        for container in containers(pod):
            own = container.get("securityContext", {})
            assert own.get("allowPrivilegeEscalation") is False, (name, container["name"])
            assert own.get("capabilities", {}).get("drop") == ["ALL"], (name, container["name"])
            assert not own.get("privileged") and own.get("runAsUser", 1) != 0, (name, container["name"])
    for account in yaml.safe_load_all((CONFIGS / "k8s-service-accounts.yaml").read_text()):
        if account and account.get("kind") == "ServiceAccount":
            assert account.get("automountServiceAccountToken") is False, account["metadata"]["name"]
    guide = GUIDE.read_text()
    assert "kubectl apply -f configs/k8s-network-policy.yaml" in guide


def lock_entries(name: str = "image-requirements.lock") -> dict[str, tuple[str, list[str]]]:
    """configs/image-requirements.lock (or the GPU image's) as {name: (version, hashes)}."""
    from packaging.utils import canonicalize_name

    entries: dict[str, tuple[str, list[str]]] = {}
    text = (CONFIGS / name).read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        found = re.fullmatch(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)", line)
        assert found, f"not a pinned and hashed requirement: {line[:80]}"
        entries[canonicalize_name(found.group(1))] = (found.group(3), re.findall(r"[0-9a-f]{64}", found.group(4)))
    return entries


def test_image_installs_its_packages_from_the_hashed_lock():
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    locked = lock_entries()
    gpu_locked = lock_entries("image-requirements-gpu.lock")
    project = pyproject()["project"]
    for dependency in project["dependencies"]:
        requirement = Requirement(dependency.split("#")[0])
        name = canonicalize_name(requirement.name)
        assert name in locked, f"the lock lacks {name}: run make lock"
        assert requirement.specifier.contains(locked[name][0]), \
            f"the lock's {name} {locked[name][0]} misses {requirement}"
    assert locked["ray"][0] == pinned_ray()
    # The GPU image's lock: the same packages at the same versions, and the gpu extra's besides.
    assert {k: v[0] for k, v in gpu_locked.items() if k in locked} == {k: v[0] for k, v in locked.items()}
    for dependency in project["optional-dependencies"]["gpu"]:
        requirement = Requirement(dependency.split("#")[0])
        name = canonicalize_name(requirement.name)
        assert name in gpu_locked and requirement.specifier.contains(gpu_locked[name][0]), f"run make lock: {name}"
    assert "nvidia-cuda-nvcc-cu12" in gpu_locked and "numba-cuda" not in locked
    runs = [" ".join(shlex.split(line)) for line in DOCKERFILE.read_text().replace("\\\n", " ").splitlines()
            if line.startswith("RUN ")]
    installs = [r for r in runs if "pip install" in r]
    assert any("--require-hashes -r configs/${LOCK}" in r for r in installs), installs
    assert re.search(r"^ARG LOCK=image-requirements.lock$", DOCKERFILE.read_text(), re.M), \
        "the CPU image's lock by default"
    assert all("--require-hashes" in r or "--no-deps ." in r for r in installs), "every pip install is pinned"
    layout, _ = dockerfile_layout()
    for name in ("image-requirements.lock", "image-requirements-gpu.lock"):
        assert PurePosixPath(f"/home/ray/bmn/configs/{name}") in layout
    dry = subprocess.run(["make", "-n", "-C", str(ROOT), "image-gpu", f"GPU_BASE_DIGEST={DOCKERFILE}"],
                         capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0 and "--build-arg LOCK=image-requirements-gpu.lock" in dry.stdout, dry.stdout + dry.stderr


def test_base_image_is_pinned_by_digest(tmp_path):
    text = DOCKERFILE.read_text()
    before_from = text[:text.index("\nFROM ")]
    assert re.search(r"^ARG RAY_BASE_DIGEST$", before_from, re.M), "the digest is an ARG without a default"
    for recorded in (CONFIGS / "base-image.digest", CONFIGS / "base-image-gpu.digest"):
        if recorded.exists():
            assert re.fullmatch(r"sha256:[0-9a-f]{64}", recorded.read_text().strip()), recorded.name
    # What `make image` runs, given a recorded digest: the build is handed exactly that digest.
    digest = tmp_path / "digest"
    digest.write_text("sha256:" + "ab" * 32 + "\n")
    dry = subprocess.run(["make", "-n", "-C", str(ROOT), "image", f"BASE_DIGEST={digest}"],
                         capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    build = " ".join(dry.stdout.replace("\\\n", " ").split())
    assert f"--build-arg RAY_BASE_DIGEST=$(cat {digest})" in build and "docker pull" not in build
    assert f"-t {image_tag()} ." in build


# --- building the image --------------------------------------------------------------------------

def docker_daemon() -> str | None:
    """Why the image cannot be built here, or None when a Docker daemon answers."""
    if shutil.which("docker") is None:
        return "no docker command on this machine"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "`docker info` did not answer"
    if info.returncode != 0:
        return "no Docker daemon answers `docker info`"
    return None


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_dockerfile_builds_and_holds_what_the_launchers_use(tmp_path):
    reason = docker_daemon()
    if reason:
        pytest.skip(reason)
    tag = "bmn-test-build:" + pyproject()["project"]["version"]
    # As a user builds it, under a test tag: from the recorded base digest, or (none recorded yet)
    # one this test records outside the repository.
    digest = CONFIGS / "base-image.digest"
    digest = digest if digest.exists() else tmp_path / "base-image.digest"
    subprocess.run(["make", "-C", str(ROOT), "image", f"IMAGE={tag}", f"BASE_DIGEST={digest}"],
                   check=True, timeout=3000)
    try:
        check = ("test -f /home/ray/bmn/configs/cluster.toml"
                 " && python -c 'import ray, sys; print(ray.__version__); sys.exit(sys.version_info < (3, 11))'"
                 " && python /home/ray/bmn/configs/warm_kernels.py"
                 " && bmn search /home/ray/bmn/configs/cluster.toml --help > /dev/null")
        out = subprocess.run(["docker", "run", "--rm", tag, "sh", "-c", check],
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.splitlines()[0] == pinned_ray()
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


def test_warm_kernels_compiles_every_strategy_or_those_named():
    """configs/warm_kernels.py, which the launchers run on every worker node (and `make test` before the
    suite): every strategy's warm-up by default, those of --only, or those of a warm-up group; a name it
    does not know is one sentence and exit 2."""
    import sys

    from kernels.strategies import REGISTRY

    script = [sys.executable, str(CONFIGS / "warm_kernels.py")]
    done = subprocess.run([*script, "0:6,1:2,2:2", "--only", "random,states"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ready = re.findall(r"warm_kernels: (\w+) ready in", done.stdout)
    assert ready == ["random", "states"] and "warm_kernels: 0:6,1:2,2:2 5,5 in" in done.stdout
    done = subprocess.run([*script, "0:6,1:2,2:2", "--group", "both"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    both = [name for name, s in REGISTRY.items() if s.warm_group == "both"]
    assert both and re.findall(r"warm_kernels: (\w+) ready in", done.stdout) == both
    done = subprocess.run([*script, "--only", "random,nope"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "got ['nope']" in done.stderr
    done = subprocess.run([*script, "--group", "gpu"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "got gpu" in done.stderr


def test_make_test_warms_every_strategy():
    """`make test` compiles every strategy's kernels before the suite, by warm-up group (two processes at
    once, then the group that uses both): every strategy names one of the groups the recipe warms, so a
    new strategy is warmed without a change here; before them, it byte-compiles the project's modules."""
    from kernels.strategies import REGISTRY
    from kernels.strategies.base import WARM_GROUPS

    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    groups = re.findall(r"\$\(WARM\) (\w+)", recipe)
    assert "WARM := $(VENV)/bin/python configs/warm_kernels.py --group" in (ROOT / "Makefile").read_text()
    assert groups == list(WARM_GROUPS) and recipe.index("wait") < recipe.index("$(WARM) both")
    for name, strategy in REGISTRY.items():
        assert strategy.warm_group in WARM_GROUPS, f"the {name} strategy names no warm-up group"
    # and byte-compiles the project's modules first, for the processes that import them (which may not write .pyc)
    compiled = re.search(r"-m compileall -q ([\w ]+?) >", recipe)
    assert compiled and {"kernels", "cluster", "tests"} <= set(compiled.group(1).split())
    assert recipe.index("compileall") < recipe.index("$(WARM)")
