"""A 2-epoch job through an installed package `stoker`, read with NumPy: run by
venv_install_test.py (a fresh venv) and tests/containers/wheel_image_test.py (an image without
compilers), from a directory outside the source tree.

    python wheel_job.py BIN_DIR      BIN_DIR: stoker-coordinator and stoker-worker (a CMake
                                     build directory or a directory holding both)

Starts a local coordinator and worker (stoker.LocalCluster, plaintext on 127.0.0.1), reads every
batch of both epochs with np.from_dlpack, and checks each epoch delivers every sample index exactly
once with its label. Prints the package's location last, for the caller to check.
"""

import os
import sys
import time

import numpy as np

import stoker

NUM_SAMPLES = 96
BATCH = 8
EPOCHS = 2
H, W, C = 8, 6, 3
NUM_CLASSES = 5
DATASET = {"num_samples": NUM_SAMPLES, "height": H, "width": W, "channels": C,
           "num_classes": NUM_CLASSES}


def read_epoch(loader, epoch):
    seen = []
    for batch in loader.batches():
        if batch.epoch != epoch:
            raise AssertionError(f"batch of epoch {batch.epoch} during epoch {epoch}")
        images = np.from_dlpack(batch)  # the batch is a DLPack producer of its images
        labels = np.from_dlpack(batch.labels_dlpack)
        indices = list(batch.raw.sample_indices)
        if images.shape != (BATCH, C, H, W) or images.dtype != np.float32:
            raise AssertionError(f"images {images.shape} {images.dtype}")
        if labels.tolist() != [i % NUM_CLASSES for i in indices]:
            raise AssertionError(f"labels {labels.tolist()} for samples {indices}")
        seen.extend(indices)
    if sorted(seen) != list(range(NUM_SAMPLES)):
        raise AssertionError(f"epoch {epoch}: {len(seen)} samples, "
                             f"{len(set(seen))} distinct of {NUM_SAMPLES}")


def main():
    bin_dir = sys.argv[1]
    with stoker.LocalCluster(bin_dir, workers=1) as cluster:
        # A fresh job per run: a finished job's name cannot be reused.
        loader = stoker.Loader(coordinator=cluster.address, dataset=DATASET, pipeline="to_float",
                               batch_size=BATCH, epochs=EPOCHS,
                               seed=int(time.time() * 1000) % (1 << 40) + os.getpid(),
                               **cluster.loader_tls)
        for epoch in range(EPOCHS):
            read_epoch(loader, epoch)
        loader.stop()
    print(f"wheel_job: {EPOCHS} epochs of {NUM_SAMPLES} samples, each exactly once")
    print(f"stoker: {os.path.dirname(os.path.realpath(stoker.__file__))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
