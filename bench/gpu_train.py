"""bench gpu-train: a real model trained on one GPU, fed by torchvision's DataLoader and by Stoker
on the same host's cores, in the same run (issue 24, "The GPU, measured").

    python3 bench/gpu_train.py --build BUILD [--device cuda] [--model resnet50] [--cores 8] ...

The data set is generated first: --images JPEGs of 500x375 (smooth random content, one folder per
class) and the same files as WebDataset tar shards with a manifest, so both loaders read the same
bytes. Every side runs the same pipeline: decode, RandomResizedCrop(224), RandomHorizontalFlip,
then to float and normalize (--sides picks which run):
  torchvision:       ImageFolder + DataLoader(num_workers=--cores, pin_memory) with
                     ToTensor+Normalize in the workers (PIL decode), the float32 batch copied to
                     the device (the transforms as the references write them);
  torchvision_uint8: the peer's best practice: the same DataLoader ending in PILToTensor, uint8
                     batches pinned and copied, converted to float and normalized on the device;
  stoker:            a coordinator and --stoker-workers workers with --cores threads in all on
                     the same host, the same pipeline text with tail "auto": uint8 HWC batches
                     streamed to the trainer, to_float/normalize on the device (the DeviceFeeder
                     runs the placed tail) when --device is cuda, on the client's CPU otherwise;
  stoker_cache:      the same with the job's decoded cache forced on ("always"; each worker
                     --decoded-cache-mib), after --cache-warm-epochs untimed epochs, so the
                     timed steps are epochs >= 2 served from the cache.
The trainer is torchvision's --model (channels_last; bf16 autocast on CUDA) trained with SGD on
the batches for --steps steps after --warmup steps. Reported per side, over the timed steps:
images/s, GPU utilization (NVML, sampled every 50 ms; absent without pynvml or a GPU) and host
CPU seconds per image (every process of the side: the trainer, DataLoader workers, coordinator,
Stoker workers, from /proc). Each round runs every side, the first side rotating by round. With
--trace-out, each Stoker round then keeps training while Loader.trace records 2 s of the batch timeline
(printed: its span count per stage; h2d appears on the device path), then while
`stoker-ctl report --json` names each rank's bottleneck (printed: verdict, NVML GPU
utilization). Last
line: RESULT name=gpu-train ... stoker_vs_torchvision=IMAGES_PER_S_RATIO, and each Stoker side
against each torchvision side that ran (stoker_cache_vs_torchvision_uint8=...), best round of
each side.

On CPU with --model tiny it checks the harness itself (CTest gpu_train_harness).
"""

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import numpy as np
from PIL import Image
import torch
import torchvision
import torchvision.transforms as T

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
CLASSES = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def make_dataset(root, images, shards):
    """JPEGs in root/images/cNN/ and the same bytes in root/shards/*.tar + manifest.json."""
    rng = np.random.default_rng(20261126)
    folder = os.path.join(root, "images")
    records = []
    for i in range(images):
        # Low-resolution noise upscaled: smooth content that compresses like a photograph.
        small = rng.integers(0, 256, size=(24, 32, 3), dtype=np.uint8)
        image = Image.fromarray(small).resize((500, 375), Image.BICUBIC)
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=90)
        label = i % CLASSES
        path = os.path.join(folder, f"c{label:02d}", f"{i:06d}.jpg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(out.getvalue())
        records.append((f"{i:06d}", out.getvalue(), label))
    shard_dir = os.path.join(root, "shards")
    os.makedirs(shard_dir)
    manifest = {"version": 1, "shards": [],
                "class_names": [f"c{c:02d}" for c in range(CLASSES)]}
    per_shard = (len(records) + shards - 1) // shards
    for s in range(shards):
        part = records[s * per_shard:(s + 1) * per_shard]
        name = f"shard-{s:04d}.tar"
        with tarfile.open(os.path.join(shard_dir, name), "w", format=tarfile.USTAR_FORMAT) as tar:
            for key, data, label in part:
                for suffix, payload in ((".jpg", data), (".cls", str(label).encode())):
                    info = tarfile.TarInfo(key + suffix)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        manifest["shards"].append({"path": name, "records": len(part),
                                   "bytes": os.path.getsize(os.path.join(shard_dir, name))})
    with open(os.path.join(shard_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return folder, os.path.join(shard_dir, "manifest.json")


def tree_cpu_seconds(root_pid):
    """CPU seconds (user + system) of root_pid and every live descendant, from /proc."""
    children, cpu = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(name), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        cpu[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    total, stack = 0.0, [root_pid]
    while stack:
        pid = stack.pop()
        total += cpu.get(pid, 0.0)
        stack.extend(children.get(pid, []))
    return total


class GpuSampler:
    """Mean GPU utilization (%) over a window, from NVML; None without pynvml or a GPU."""

    def __init__(self, device):
        self.handle = None
        if device.type != "cuda":
            return
        try:
            import pynvml
            pynvml.nvmlInit()
            index = device.index if device.index is not None else 0
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self.nvml = pynvml
        except Exception:  # pynvml missing or no driver: report no utilization
            self.handle = None

    def __enter__(self):
        self.samples, self.stop = [], threading.Event()
        if self.handle is not None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def _run(self):
        while not self.stop.wait(0.05):
            self.samples.append(self.nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)

    def __exit__(self, *exc):
        self.stop.set()
        if self.handle is not None:
            self.thread.join()
        return False

    def mean(self):
        return sum(self.samples) / len(self.samples) if self.samples else None


def make_model(name, device):
    if name == "tiny":
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 7, stride=4), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(), torch.nn.Linear(8, CLASSES))
    else:
        model = getattr(torchvision.models, name)(num_classes=CLASSES)
    return model.to(device).to(memory_format=torch.channels_last)


class Trainer:
    def __init__(self, args, device):
        self.device = device
        self.model = make_model(args.model, device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.autocast = device.type == "cuda"

    def step(self, images, labels):
        images = images.to(self.device, non_blocking=True).contiguous(
            memory_format=torch.channels_last)
        labels = labels.to(self.device, non_blocking=True)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
            loss = torch.nn.functional.cross_entropy(self.model(images), labels)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss


def timed_training(trainer, batches, args, warmup=None):
    """Runs `warmup` (default --warmup) then --steps steps from the `batches` iterator; returns
    the figures."""
    for _ in range(args.warmup if warmup is None else warmup):
        images, labels = next(batches)
        trainer.step(images, labels)
    if trainer.device.type == "cuda":
        torch.cuda.synchronize(trainer.device)
    cpu_before = tree_cpu_seconds(os.getpid())
    with GpuSampler(trainer.device) as gpu:
        start = time.perf_counter()
        for _ in range(args.steps):
            images, labels = next(batches)
            loss = trainer.step(images, labels)
        loss.item()  # waits for the last step, as a trainer reading its loss does
        seconds = time.perf_counter() - start
    cpu = tree_cpu_seconds(os.getpid()) - cpu_before
    images = args.steps * args.batch
    return {"images_per_s": images / seconds, "gpu_util": gpu.mean(),
            "cpu_ms_per_image": 1000.0 * cpu / images, "seconds": seconds}


def endless(make_epoch):
    while True:
        yield from make_epoch()


def torchvision_loader(args, device, folder, last_transforms):
    transform = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip()] + last_transforms)
    dataset = torchvision.datasets.ImageFolder(folder, transform=transform)
    return torch.utils.data.DataLoader(
        dataset, batch_size=args.batch, shuffle=True, num_workers=args.cores,
        pin_memory=device.type == "cuda", drop_last=True, persistent_workers=args.cores > 0,
        prefetch_factor=4 if args.cores > 0 else None)


def run_torchvision(args, device, folder):
    loader = torchvision_loader(args, device, folder, [T.ToTensor(), T.Normalize(MEAN, STD)])
    trainer = Trainer(args, device)
    return timed_training(trainer, endless(lambda: iter(loader)), args)


def normalized_on_device(batches, device):
    """uint8 NCHW batches from the DataLoader, copied and then converted on the device: float,
    less mean*255, over std*255 (to_float's 1/255 folded into the normalize)."""
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1) * 255
    for images, labels in batches:
        images = images.to(device, non_blocking=True).contiguous(
            memory_format=torch.channels_last).float()
        yield images.sub_(mean).div_(std), labels


def run_torchvision_uint8(args, device, folder):
    loader = torchvision_loader(args, device, folder, [T.PILToTensor()])
    trainer = Trainer(args, device)
    return timed_training(trainer, normalized_on_device(endless(lambda: iter(loader)), device),
                          args)


def run_stoker_cache(args, device, manifest):
    warm_steps = args.cache_warm_epochs * args.images // args.batch
    return run_stoker(args, device, manifest, decoded_cache="always",
                      worker_flags=[f"--decoded-cache-bytes={args.decoded_cache_mib << 20}"],
                      warmup=args.warmup + warm_steps, trace=False)


def run_stoker(args, device, manifest, decoded_cache=None, worker_flags=(), warmup=None,
               trace=True):
    import stoker
    threads = max(1, args.cores // args.stoker_workers)
    with stoker.LocalCluster(args.build, workers=args.stoker_workers, worker_threads=threads,
                             tls_dir=args.tls_dir, data_roots=[os.path.dirname(manifest)],
                             worker_flags=worker_flags) as cluster:
        # The torchvision pipeline as written; tail "auto" ships uint8 and runs to_float and
        # normalize on the GPU (DeviceFeeder) or, on the CPU, in this process.
        loader = stoker.Loader(
            coordinator=cluster.address, dataset=manifest, batch_size=args.batch, epochs=1000,
            pipeline=["decode", "random_resized_crop(height=224, width=224)",
                      "horizontal_flip(p=0.5)", "to_float", f"normalize(mean={MEAN}, std={STD})"],
            device=str(device) if device.type == "cuda" else "cpu", drop_last=True,
            decoded_cache=decoded_cache, **cluster.loader_tls)
        with loader:
            trainer = Trainer(args, device)
            batches = endless(lambda: iter(loader))
            result = timed_training(trainer, batches, args, warmup)
            if args.trace_out and trace:
                training_while(trainer, batches, lambda: loader.trace(2, args.trace_out))
                result["trace_stages"] = stage_counts(args.trace_out)
                result["report"] = training_while(
                    trainer, batches, lambda: stoker_ctl_report(args, cluster, loader))
    return result


def training_while(trainer, batches, task):
    """After the timed steps (tracing would be inside them otherwise): keeps training while
    `task` runs on another thread; returns what it returned."""
    done = []
    thread = threading.Thread(target=lambda: done.append(task()))
    thread.start()
    for _ in range(100_000):  # bounded; a 2 s trace returns after about 7 s
        if not thread.is_alive():
            break
        trainer.step(*next(batches))
    thread.join()
    return done[0] if done else None


def stage_counts(path):
    """Span count per stage name in a Chrome Trace file (h2d present on the device path)."""
    with open(path) as text:
        events = json.load(text)["traceEvents"]
    counts = {}
    for event in events:
        if event.get("ph") == "X":
            counts[event["name"]] = counts.get(event["name"], 0) + 1
    return counts


def stoker_ctl_report(args, cluster, loader):
    """`stoker-ctl report --json` over 2 s of training, as an operator: each rank's verdict and
    its GPU utilization (NVML, null without a GPU)."""
    from stoker.local_cluster import _find_binary
    tls = ([f"--tls-cert={args.tls_dir}/operator.pem", f"--tls-key={args.tls_dir}/operator.key",
            f"--tls-ca={args.tls_dir}/ca.pem"] if args.tls_dir else ["--insecure"])
    ctl = _find_binary(args.build, "tools", "stoker-ctl")
    out = subprocess.run([ctl, "report", f"--coordinator={cluster.address}",
                          f"--job={loader.job_id}", "--seconds=2", "--json"] + tls,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return [{key: rank[key] for key in ("rank", "verdict", "gpu_utilization")}
            for rank in json.loads(out)["ranks"]]


SIDES = {"torchvision": ("folder", run_torchvision),
         "torchvision_uint8": ("folder", run_torchvision_uint8),
         "stoker": ("manifest", run_stoker),
         "stoker_cache": ("manifest", run_stoker_cache)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="CMake build dir (or a bin/ with both)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--model", default="resnet50", help="torchvision model name, or tiny")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--cores", type=int, default=8,
                        help="DataLoader workers; Stoker worker threads in all")
    parser.add_argument("--stoker-workers", type=int, default=2)
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds per side")
    parser.add_argument("--tls-dir", default=None,
                        help="certificates from scripts/dev-certs.sh: mutual TLS (else plaintext)")
    parser.add_argument("--sides", default=",".join(SIDES),
                        help="comma-separated, of " + ", ".join(SIDES))
    parser.add_argument("--decoded-cache-mib", type=int, default=2048,
                        help="stoker_cache: each worker's --decoded-cache-bytes, in MiB")
    parser.add_argument("--cache-warm-epochs", type=int, default=2,
                        help="stoker_cache: untimed epochs before --warmup and --steps")
    parser.add_argument("--trace-out", default=None,
                        help="after each Stoker round, trace 2 s of training to this JSON file, "
                        "then run stoker-ctl report over 2 s more")
    args = parser.parse_args()
    sides = args.sides.split(",")
    unknown = [side for side in sides if side not in SIDES]
    if unknown or "torchvision" not in sides or "stoker" not in sides:
        parser.error(f"--sides: {unknown or args.sides}: each of {', '.join(SIDES)}, "
                     "torchvision and stoker among them")
    device = torch.device(args.device)
    torch.manual_seed(0)
    random.seed(0)
    with tempfile.TemporaryDirectory(prefix="stoker-gpu-train-") as root:
        inputs = dict(zip(("folder", "manifest"), make_dataset(root, args.images, args.shards)))
        results = {side: [] for side in sides}
        for r in range(args.rounds):
            for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                source, run = SIDES[side]
                results[side].append(run(args, device, inputs[source]))
                print("round", r, side, results[side][-1], flush=True)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    best = {side: max(runs, key=lambda x: x["images_per_s"]) for side, runs in results.items()}
    fields = [f"device={name.replace(' ', '_')}", f"model={args.model}", f"batch={args.batch}",
              f"cores={args.cores}", f"tls={'on' if args.tls_dir else 'off'}"]
    for side, figures in best.items():
        fields.append(f"{side}_images_per_s={figures['images_per_s']:.1f}")
        fields.append(f"{side}_cpu_ms_per_image={figures['cpu_ms_per_image']:.3f}")
        if figures["gpu_util"] is not None:
            fields.append(f"{side}_gpu_util={figures['gpu_util']:.1f}")
    for ours in ("stoker", "stoker_cache"):
        for peer in ("torchvision", "torchvision_uint8"):
            if ours in best and peer in best:
                ratio = best[ours]["images_per_s"] / best[peer]["images_per_s"]
                fields.append(f"{ours}_vs_{peer}={ratio:.3f}")
    print("RESULT name=gpu-train " + " ".join(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
