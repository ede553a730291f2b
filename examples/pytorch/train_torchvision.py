#!/usr/bin/python3
"""Trains with an existing torchvision transform, run by Stoker's workers instead of a DataLoader.

    /usr/bin/python3 examples/pytorch/train_torchvision.py [--build-dir=build] [--coordinator=H:P]

The transform below is what a training script already has (torchvision.transforms); the only
change is handing it to stoker.Loader(transform=...) instead of a Dataset. stoker.from_torchvision
shows what each transform became, and refuses (ValueError naming the transform, its position and
the closest supported one) what Stoker cannot run. The data is synthetic (random 64x64 RGB
images, label = index mod 10) so the example runs anywhere; for a folder of JPEGs packed with
stoker-pack, pass the manifest as `dataset` and the Loader decodes first, as PIL would.
Without --coordinator it starts a local cluster and stops it at the end.
"""

import argparse
import os
import sys
import time

from train_tiny import HERE, import_stoker

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def existing_transform():
    """A training script's transform, as it was written for a torch DataLoader."""
    import torchvision.transforms as T
    return T.Compose([
        T.RandomResizedCrop(48, scale=(0.25, 1.0)),
        T.RandomHorizontalFlip(),
        T.RandomAutocontrast(p=0.2),
        T.ToTensor(),
        T.Normalize(MEAN, STD),
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(HERE, "..", "..", "build"))
    parser.add_argument("--coordinator", help="use this cluster instead of starting one")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--num-samples", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    import torch
    from torch import nn
    stoker = import_stoker(os.path.abspath(args.build_dir))
    torch.manual_seed(0)
    torch.set_num_threads(1)

    transform = existing_transform()
    print("torchvision transform, as Stoker runs it:")
    print(stoker.from_torchvision(transform).describe())

    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def train(coordinator, tls):
        loader = stoker.Loader(
            coordinator=coordinator, **tls,
            dataset={"num_samples": args.num_samples, "height": 64, "width": 64,
                     "channels": 3, "num_classes": 10},
            transform=transform,                  # instead of pipeline=...
            batch_size=args.batch_size, epochs=args.epochs, seed=1,
            job_name=f"train-torchvision-{os.getpid()}-{int(time.time())}",
            prefetch_bytes=16 << 20)
        with loader:
            for epoch in range(loader.epochs):
                total, batches = 0.0, 0
                for images, labels in loader:    # float32 [N, 3, 48, 48], normalized
                    assert images.shape[1:] == (3, 48, 48), images.shape
                    optimizer.zero_grad()
                    loss = loss_fn(model(images), labels)
                    loss.backward()
                    optimizer.step()
                    total += loss.item()
                    batches += 1
                print(f"epoch {epoch}: {batches} batches, mean loss {total / batches:.4f}")
            stats = loader.stats()
            print(f"{stats['batches_delivered']} batches from {len(stats['workers'])} workers")

    if args.coordinator:
        train(args.coordinator, {"tls": stoker.TlsOptions(insecure=True)})
    else:
        with stoker.LocalCluster(os.path.abspath(args.build_dir), workers=args.workers) as cluster:
            train(cluster.address, cluster.loader_tls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
