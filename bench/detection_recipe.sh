# The torchvision detection references' train transforms as a Stoker pipeline, up to one output
# size for the batch (uint8 HWC): sourced by bench/augment-recipes.sh (which adds to_float) and
# bench/e2e-detection.sh. v2's RandomPhotometricDistort without its channel permutation (Stoker
# has no such op): each adjustment with p 0.5, contrast before or after saturation and hue with
# p 0.5 each; RandomZoomOut, RandomIoUCrop, RandomHorizontalFlip, SanitizeBoundingBoxes; then
# one 512x512 size (bilinear with antialiasing, as torchvision's resize of uint8 tensors).
jitter() { echo "random_apply(ops=[color_jitter($1)], p=0.5)"; }
CONTRAST=$(jitter contrast=0.5) SATURATION=$(jitter saturation=0.5) HUE=$(jitter hue=0.05)
DISTORT="$(jitter brightness=0.125), random_choice(ops=[\
random_apply(ops=[$CONTRAST, $SATURATION, $HUE], p=1), \
random_apply(ops=[$SATURATION, $HUE, $CONTRAST], p=1)])"
DETECTION_UINT8="decode, $DISTORT, zoom_out, random_iou_crop, horizontal_flip, sanitize_boxes, \
resize(height=512, width=512, interpolation=2)"
