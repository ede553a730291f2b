"""stoker.torch: PyTorch conveniences, imported only when asked for (they need torch).

    dataset = stoker.torch.StokerIterableDataset(loader)     # or loader.as_iterable_dataset()
    for images, labels in torch.utils.data.DataLoader(dataset, batch_size=None):
        ...                                                  # one epoch per pass

The loader already batches, shuffles and runs the pipeline on the workers: give the DataLoader
batch_size=None and num_workers=0 (a DataLoader worker process would open a second stream).
"""

from typing import Any, Dict, Iterator

import torch.utils.data


class StokerIterableDataset(torch.utils.data.IterableDataset):
    """A stoker.Loader as an IterableDataset: each pass yields the rest of the current epoch,
    exactly what iterating the loader yields (torch tensors: the loader must have
    tensors="torch" or "auto"). len() is the batches per epoch for this rank. state_dict() /
    load_state_dict() are the loader's, so torchdata's StatefulDataLoader checkpoints it."""

    # "stoker.Loader" unevaluated: stoker.loader imports this module (as_iterable_dataset), so
    # importing it back would make a circle.
    def __init__(self, loader: "stoker.Loader") -> None:  # noqa: F821
        super().__init__()
        if loader.tensor_type != "torch":
            raise ValueError("loader: its tensors must be torch tensors (tensors='torch')")
        self.loader = loader

    def __iter__(self) -> Iterator[Any]:
        if torch.utils.data.get_worker_info() is not None:
            raise RuntimeError("StokerIterableDataset: use DataLoader(..., num_workers=0); the "
                               "Stoker workers do the loading")
        return iter(self.loader)

    def __len__(self) -> int:
        return len(self.loader)

    def state_dict(self) -> Dict[str, Any]:
        return self.loader.state_dict()

    def load_state_dict(self, state: Any) -> None:
        self.loader.load_state_dict(state)


__all__ = ["StokerIterableDataset"]
