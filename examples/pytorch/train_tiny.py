#!/usr/bin/python3
"""Trains a tiny conv net on CPU from a Stoker job, through the Python module `stoker`.

    /usr/bin/python3 examples/pytorch/train_tiny.py [--build-dir=build] [--coordinator=HOST:PORT]
                                                    [--tls-dir=DIR]

Without --coordinator it starts a local cluster (a coordinator and --workers workers from the
build directory, on 127.0.0.1) and stops it at the end. The build directory defaults to
$STOKER_BUILD_DIR (relative to the checkout, as for scripts/build.sh), else build/. With
--tls-dir (certificates made by scripts/dev-certs.sh DIR) it speaks mutual TLS, as trainer;
without, plaintext: the cluster given by --coordinator must then run with --insecure.

The data is the synthetic blur workload at a small size: random 32x32 RGB images,
"to_float, gaussian_blur(ksize=5)*2" on the workers, label = index mod 10. The pixels are
random, so the loss only shows that the loop runs: there is nothing to learn beyond the label
frequencies.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def import_stoker(build_dir):
    try:
        import stoker  # installed, or on PYTHONPATH
        return stoker
    except ImportError:
        sys.path.insert(0, os.path.join(build_dir, "trainer_client", "python"))
        import stoker
        return stoker


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(
        HERE, "..", "..", os.environ.get("STOKER_BUILD_DIR") or "build"))
    parser.add_argument("--coordinator", help="use this cluster instead of starting one")
    parser.add_argument("--tls-dir", help="mutual TLS with scripts/dev-certs.sh's certificates")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--num-samples", type=int, default=1024)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--job-name", help="default: a fresh name per run")
    args = parser.parse_args()

    import torch
    from torch import nn
    stoker = import_stoker(os.path.abspath(args.build_dir))
    torch.manual_seed(0)
    torch.set_num_threads(1)

    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def train(coordinator, tls):
        loader = stoker.Loader(
            coordinator=coordinator, **tls,
            dataset={"num_samples": args.num_samples, "height": args.image_size,
                     "width": args.image_size, "channels": 3, "num_classes": 10},
            pipeline=["to_float", "gaussian_blur(ksize=5)*2"],   # float32, NCHW by default
            batch_size=args.batch_size, epochs=args.epochs, seed=1,
            job_name=args.job_name or f"train-tiny-{os.getpid()}-{int(time.time())}",
            device="cpu", prefetch_bytes=16 << 20)
        with loader:
            print(f"job {loader.job_name}: {loader.epochs} epochs x {len(loader)} batches")
            step = 0
            for epoch in range(loader.epochs):
                start, total, batches = time.monotonic(), 0.0, 0
                for images, labels in loader:   # torch tensors over the received batch
                    optimizer.zero_grad()
                    loss = loss_fn(model(images), labels)
                    loss.backward()
                    optimizer.step()
                    total += loss.item()
                    batches += 1
                    step += 1
                    if step % 10 == 0:
                        print(f"  step {step:4d}  loss {loss.item():.4f}")
                elapsed = time.monotonic() - start
                print(f"epoch {epoch}: {batches} batches, mean loss {total / batches:.4f}, "
                      f"{batches * args.batch_size / elapsed:.0f} images/s")
            stats = loader.stats()
            print(f"data wait {100 * stats['data_wait_fraction']:.1f}% of the loop; "
                  f"{stats['batches_delivered']} batches from {len(stats['workers'])} workers")

    if args.coordinator:
        tls = stoker.TlsOptions(insecure=True)
        if args.tls_dir:
            tls = stoker.TlsOptions(cert_file=os.path.join(args.tls_dir, "trainer.pem"),
                                    key_file=os.path.join(args.tls_dir, "trainer.key"),
                                    ca_file=os.path.join(args.tls_dir, "ca.pem"))
        train(args.coordinator, {"tls": tls})
    else:
        with stoker.LocalCluster(os.path.abspath(args.build_dir), workers=args.workers,
                                 tls_dir=args.tls_dir) as cluster:
            print(f"local cluster: coordinator {cluster.address}, workers "
                  f"{', '.join(cluster.worker_addresses)}")
            train(cluster.address, cluster.loader_tls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
