"""stoker.from_torchvision against torchvision (Debian's python3-torchvision, run with
/usr/bin/python3): the reference recipes translate, translated pipelines run here
(stoker.run_pipeline, the workers' executor) give torchvision's output on a real photograph
(skimage's chelsea.png) and on synthetic edge cases, unsupported transforms are ValueErrors
naming the transform, its position and the closest supported one, and stoker.Loader takes a
transform directly.

    /usr/bin/python3 tests/python/torchvision_translate_test.py BUILD_DIR
"""

import os
import sys
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision.transforms as T  # noqa: E402
from PIL import Image  # noqa: E402
from skimage import data  # noqa: E402

import stoker  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def F_pad(image, padding, mode):
    import torchvision.transforms.functional as F
    return F.pad(image, padding, padding_mode=mode)
FLOAT = T.ConvertImageDtype(torch.float)


def photo():
    return Image.fromarray(data.chelsea())  # 451 x 300 RGB


def reference_train(crop_size=224):
    """torchvision's references/classification/presets.py ClassificationPresetTrain (defaults:
    no auto_augment, no random erasing)."""
    return T.Compose([T.RandomResizedCrop(crop_size), T.RandomHorizontalFlip(0.5),
                      T.PILToTensor(), FLOAT, T.Normalize(MEAN, STD)])


def reference_eval(crop_size=224, resize_size=256):
    """presets.py ClassificationPresetEval."""
    return T.Compose([T.Resize(resize_size), T.CenterCrop(crop_size), T.PILToTensor(), FLOAT,
                      T.Normalize(MEAN, STD)])


class TranslateTest(unittest.TestCase):
    def test_reference_recipes_translate(self):
        train = stoker.from_torchvision(reference_train())
        self.assertEqual(train.ops, [
            "random_resized_crop(height=224, width=224, scale_min=0.08, scale_max=1, "
            "ratio_min=0.75, ratio_max=1.3333333333333333, interpolation=2)",
            "horizontal_flip(p=0.5)", "to_float",
            "normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])"])
        evaluation = stoker.from_torchvision(reference_eval(), decode=True)
        self.assertEqual(evaluation.ops[:3], ["decode", "resize(shorter=256, interpolation=2)",
                                              "center_crop(height=224, width=224)"])
        # Every source transform is listed, identities included.
        described = evaluation.describe()
        for name in ("Resize", "CenterCrop", "PILToTensor", "ConvertImageDtype", "Normalize"):
            self.assertIn(name, described)
        self.assertIn("(no op)", described)

    def test_timm_style_train_transform(self):
        timm_like = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                               T.ColorJitter(0.4, 0.4, 0.4), T.ToTensor(), T.Normalize(MEAN, STD),
                               T.RandomErasing(0.25, value="random")])
        ops = stoker.from_torchvision(timm_like).ops
        self.assertIn("color_jitter(brightness=0.4, contrast=0.4, saturation=0.4)", ops)
        self.assertEqual(ops[-1], "random_erasing(p=0.25, scale_min=0.02, scale_max=0.33, "
                                  "ratio_min=0.3, ratio_max=3.3, value_random=1)")

    def test_random_rotation(self):
        self.assertEqual(
            stoker.from_torchvision(T.RandomRotation((-15, 30), fill=7)).ops,
            ["random_rotation(degrees_min=-15, degrees_max=30, bilinear=0, fill=[7])"])

    def test_random_affine(self):
        self.assertEqual(
            stoker.from_torchvision(T.RandomAffine(10, translate=(0.1, 0.2), scale=(0.9, 1.1),
                                                   shear=5)).ops,
            ["random_affine(degrees_min=-10, degrees_max=10, translate=[0.1, 0.2], "
             "scale_min=0.9, scale_max=1.1, shear=[-5, 5], bilinear=0, fill=[0])"])
        # Ranges of one value: the warp equals F.affine with those parameters.
        pixels = np.ascontiguousarray(data.chelsea()[:90, :121])
        fixed = T.RandomAffine((12, 12), scale=(0.9, 0.9), shear=(5, 5, 2, 2), fill=3)
        ours = stoker.run_pipeline(stoker.from_torchvision(fixed), pixels)
        tensor = torch.from_numpy(pixels).permute(2, 0, 1).contiguous()
        expected = fixed(tensor)
        self.assertLessEqual((ours.int() - expected.int()).abs().max().item(), 1)

    def test_color_jitter_with_hue(self):
        self.assertEqual(stoker.from_torchvision(T.ColorJitter(0.2, hue=0.1)).ops,
                         ["color_jitter(brightness=0.2, hue=0.1)"])

    def test_deterministic_transforms_equal_torchvision_on_a_photo(self):
        image = photo()
        exact = T.Compose([T.CenterCrop((223, 201)), T.RandomHorizontalFlip(p=1.0), T.ToTensor(),
                           T.Normalize(MEAN, STD)])
        ours = stoker.run_pipeline(stoker.from_torchvision(exact), image)
        self.assertEqual(ours.shape, (3, 223, 201))
        self.assertLessEqual((ours - exact(image)).abs().max().item(), 1e-4)
        # Bilinear resizing of a tensor without antialiasing: uint8 within one level.
        resized = T.Compose([T.PILToTensor(), T.Resize((200, 301), antialias=False)])
        ours = stoker.run_pipeline(stoker.from_torchvision(resized), image)
        self.assertEqual(ours.dtype, torch.uint8)
        diff = (ours.int() - resized(image).int()).abs().max().item()
        self.assertLessEqual(diff, 1)

    def test_reference_eval_equals_torchvision_on_a_photo(self):
        # PIL's antialiased resize, then crop, convert and normalize: the whole eval recipe.
        image = photo()
        evaluation = reference_eval()
        ours = stoker.run_pipeline(stoker.from_torchvision(evaluation), image)
        self.assertEqual(ours.shape, (3, 224, 224))
        self.assertLessEqual((ours - evaluation(image)).abs().max().item(), 1e-4)

    def test_encoded_samples_decode_like_pil(self):
        # The eval recipe on encoded bytes (decode first) against torchvision on what PIL opens:
        # a plain JPEG of the photo, and the CMYK JPEG fixture of the decoder's PIL test.
        import io
        fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "augment", "kernels", "testdata", "pil")
        encoded = io.BytesIO()
        photo().save(encoded, "JPEG", quality=90)
        with open(os.path.join(fixtures, "cmyk_adobe.jpg"), "rb") as f:
            cmyk = f.read()
        for name, data_bytes, size in (("photo.jpg", encoded.getvalue(), 224),
                                       ("cmyk_adobe.jpg", cmyk, 24)):
            evaluation = reference_eval(crop_size=size, resize_size=size + 4)
            pipeline = stoker.from_torchvision(evaluation, decode=True)
            ours = stoker.run_pipeline(pipeline, data_bytes)
            expected = evaluation(Image.open(io.BytesIO(data_bytes)).convert("RGB"))
            self.assertLessEqual((ours - expected).abs().max().item(), 1e-4, name)

    def test_tone_transforms_before_to_tensor_equal_torchvision(self):
        image = photo()
        # Exact ops first: a one-level difference (allowed for autocontrast and sharpness)
        # would be amplified by a later posterize or solarize threshold.
        tones = T.Compose([T.RandomVerticalFlip(1.0), T.RandomEqualize(1.0),
                           T.RandomPosterize(5, 1.0), T.RandomSolarize(200, 1.0),
                           T.RandomInvert(1.0), T.RandomAutocontrast(1.0),
                           T.RandomAdjustSharpness(1.7, 1.0), T.ToTensor()])
        ours = stoker.run_pipeline(stoker.from_torchvision(tones), image)
        self.assertLessEqual((ours - tones(image)).abs().max().item() * 255, 1.0001)

    def test_pad_and_padded_random_crop(self):
        transform = T.Compose([T.Pad([1, 2], fill=(9, 8, 7)),
                               T.RandomCrop(40, padding=4, padding_mode="reflect",
                                            pad_if_needed=True)])
        self.assertEqual(stoker.from_torchvision(transform).ops, [
            "pad(padding=[1, 2], fill=[9, 8, 7], padding_mode=0)",
            "random_crop(height=40, width=40, padding=[4], fill=[0], padding_mode=2, "
            "pad_if_needed=1)"])
        pixels = np.ascontiguousarray(data.chelsea()[:30, :25])
        padded = torch.from_numpy(np.asarray(T.Pad([1, 2], fill=(9, 8, 7))(
            Image.fromarray(pixels)))).permute(2, 0, 1)
        padded = torch.nn.functional.pad(padded[None].float(), [4, 4, 4, 4], mode="reflect")[0]
        # pad_if_needed: a side under 40 grows by the difference on both ends, as torchvision.
        grow_w, grow_h = max(0, 40 - padded.shape[2]), max(0, 40 - padded.shape[1])
        self.assertGreater(grow_w, 0)
        padded = F_pad(padded, [grow_w, grow_h], "reflect")
        ours = stoker.run_pipeline(stoker.from_torchvision(transform), pixels, index=3).float()
        self.assertEqual(ours.shape, (3, 40, 40))
        windows = [(t, l) for t in range(padded.shape[1] - 39) for l in range(padded.shape[2] - 39)
                   if torch.equal(padded[:, t:t + 40, l:l + 40], ours)]
        self.assertTrue(windows)

    def test_edge_cases(self):
        rng = np.random.default_rng(5)
        for shape in [(1, 1, 3), (7, 5, 3), (9, 4)]:
            pixels = rng.integers(0, 256, size=shape, dtype=np.uint8)
            transform = T.Compose([T.RandomHorizontalFlip(p=1.0), T.ToTensor()])
            ours = stoker.run_pipeline(stoker.from_torchvision(transform), pixels)
            self.assertLessEqual((ours - transform(Image.fromarray(pixels))).abs().max().item(),
                                 1e-6, shape)

    def test_random_transforms_are_per_sample_deterministic(self):
        pipeline = stoker.from_torchvision(reference_train(64))
        image = photo()
        a = stoker.run_pipeline(pipeline, image, seed=3, index=17)
        self.assertTrue(torch.equal(a, stoker.run_pipeline(pipeline, image, seed=3, index=17)))
        self.assertFalse(torch.equal(a, stoker.run_pipeline(pipeline, image, seed=3, index=18)))

    def test_unsupported_transforms_name_position_and_closest(self):
        cases = [
            (T.Compose([T.ToTensor(), T.Lambda(lambda x: x)]), "Lambda at position 1",
             "arbitrary Python"),
            (T.Compose([T.Resize(8), T.Compose([T.ElasticTransform()])]),
             "ElasticTransform at position 1.0", "closest supported: "),
            (T.Compose([T.RandomApply([T.Lambda(lambda x: x)])]), "Lambda at position 0.0",
             "arbitrary Python"),
            (T.Compose([T.AutoAugment(T.AutoAugmentPolicy.CIFAR10)]), "AutoAugment at position 0",
             "ImageNet policy only"),
            (T.Compose([T.ToTensor(), T.RandAugment()]), "RandAugment at position 1",
             "needs a uint8 image"),
            (T.Compose([T.RandomApply([T.ToTensor()])]), "RandomApply at position 0",
             "changes the image's type"),
            (T.Compose([T.RandomRotation(10, expand=True)]), "RandomRotation at position 0",
             "expand"),
            (T.Compose([T.FiveCrop(8)]), "FiveCrop at position 0", "closest supported: CenterCrop"),
            (T.Compose([T.Resize(8, interpolation=T.InterpolationMode.NEAREST)]),
             "Resize at position 0", "interpolation=nearest"),
            (T.Compose([T.ColorJitter(hue=(0.0, 0.2))]), "ColorJitter at position 0",
             "symmetric range"),
            (T.Compose([T.Normalize(MEAN, STD)]), "Normalize at position 0", "ToTensor"),
        ]
        for transform, where, why in cases:
            with self.assertRaises(ValueError) as raised:
                stoker.from_torchvision(transform)
            self.assertIn(where, str(raised.exception))
            self.assertIn(why, str(raised.exception))

    def test_values_outside_the_registry_ranges_name_the_transform(self):
        # The ranges come from the op registry (stoker._stoker.op_schemas()), not the translator.
        cases = [
            (T.Compose([T.RandomHorizontalFlip(p=1.5)]), "RandomHorizontalFlip at position 0",
             "p=1.5: Stoker's horizontal_flip.p must be in [0, 1]"),
            (T.Compose([T.Resize(8), T.RandomPosterize(bits=9)]),
             "RandomPosterize at position 1", "bits=9: Stoker's posterize.bits must be in [0, 8]"),
            (T.Compose([T.RandomApply([T.RandomInvert()], p=-0.5)]),
             "RandomApply at position 0", "random_apply.p must be in [0, 1]"),
            (T.Compose([T.ToTensor(), T.Normalize(MEAN, (0.2, 0, 0.2))]),
             "Normalize at position 1", "normalize.std must be > 0"),
        ]
        for transform, where, why in cases:
            with self.assertRaises(ValueError) as raised:
                stoker.from_torchvision(transform)
            self.assertIn(where, str(raised.exception))
            self.assertIn(why, str(raised.exception))

    def test_op_schemas_are_the_registry(self):
        schemas = {s["name"]: s for s in stoker._stoker.op_schemas()}
        self.assertIn("gaussian_blur", schemas)
        self.assertTrue(schemas["mixup"]["batch"])
        ksize = schemas["gaussian_blur"]["args"][0]
        self.assertEqual((ksize["name"], ksize["type"], ksize["default"]), ("ksize", "int", None))
        p = {a["name"]: a for a in schemas["horizontal_flip"]["args"]}["p"]
        self.assertEqual((p["default"], p["range"]["text"]), ("0.5", "[0, 1]"))

    def test_loader_takes_a_transform(self):
        transform = reference_eval()
        args = dict(coordinator="127.0.0.1:1", tls=stoker.TlsOptions(insecure=True))
        loader = stoker.Loader(dataset="/data/train.manifest", transform=transform, **args)
        self.assertEqual(loader._config.pipeline,
                         stoker.from_torchvision(transform, decode=True).text)
        loader = stoker.Loader(dataset=16, transform=transform, **args)
        self.assertEqual(loader._config.pipeline, stoker.from_torchvision(transform).text)
        with self.assertRaisesRegex(ValueError, "pipeline, transform"):
            stoker.Loader(dataset=16, pipeline="to_float", transform=transform, **args)

class ReferencesIoUCrop(torch.nn.Module):
    """The arguments of the detection references' RandomIoUCrop (references/detection/
    transforms.py, the same as v2's), as torchvision 0.14's users have it."""

    def __init__(self):
        super().__init__()
        self.min_scale, self.max_scale = 0.3, 1.0
        self.min_aspect_ratio, self.max_aspect_ratio = 0.5, 2.0
        self.options, self.trials = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0], 40


ReferencesIoUCrop.__name__ = "RandomIoUCrop"


class ReferencesZoomOut(torch.nn.Module):
    def __init__(self, fill=None, side_range=(1.0, 4.0), p=0.5):
        super().__init__()
        self.fill, self.side_range, self.p = fill or [0.0, 0.0, 0.0], side_range, p


ReferencesZoomOut.__name__ = "RandomZoomOut"


class ReferencesPhotometricDistort(torch.nn.Module):
    p = 0.5


ReferencesPhotometricDistort.__name__ = "RandomPhotometricDistort"


class DetectionTranslateTest(unittest.TestCase):
    def test_the_detection_references_transforms_translate(self):
        pipeline = stoker.from_torchvision(
            T.Compose([ReferencesZoomOut(), ReferencesIoUCrop(), T.RandomHorizontalFlip(0.5)]))
        self.assertEqual(pipeline.ops, [
            "zoom_out(fill=[0, 0, 0], side_min=1, side_max=4, p=0.5)",
            "random_iou_crop(min_scale=0.3, max_scale=1, min_aspect_ratio=0.5, "
            "max_aspect_ratio=2, sampler_options=[0, 0.1, 0.3, 0.5, 0.7, 0.9, 1], trials=40)",
            "horizontal_flip(p=0.5)"])

    def test_photometric_distort_names_the_missing_channel_permutation(self):
        with self.assertRaises(ValueError) as raised:
            stoker.from_torchvision(T.Compose([ReferencesPhotometricDistort()]))
        self.assertIn("RandomPhotometricDistort at position 0", str(raised.exception))
        self.assertIn("permutes the channels", str(raised.exception))

    def test_without_v2_the_error_names_what_is_missing(self):
        try:
            import torchvision.transforms.v2  # noqa: F401
        except ImportError:
            pass
        else:
            self.skipTest("torchvision.transforms.v2 is installed here")
        with self.assertRaises(ImportError) as raised:
            stoker.torchvision_v2()
        message = str(raised.exception)
        self.assertIn("has no torchvision.transforms.v2", message)
        for name in ("RandomIoUCrop", "RandomZoomOut", "SanitizeBoundingBoxes"):
            self.assertIn(name, message)

    def test_with_v2_its_detection_transforms_translate(self):
        try:
            v2 = stoker.torchvision_v2()
        except ImportError as missing:
            self.skipTest(str(missing))
        pipeline = stoker.from_torchvision(v2.Compose([
            v2.RandomZoomOut(fill=0), v2.RandomIoUCrop(), v2.RandomHorizontalFlip(),
            v2.SanitizeBoundingBoxes()]))
        self.assertEqual([op.split("(")[0] for op in pipeline.ops],
                         ["zoom_out", "random_iou_crop", "horizontal_flip", "sanitize_boxes"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
