#ifndef STOKER_TESTS_TESTING_PACKED_IMAGES_H_
#define STOKER_TESTS_TESTING_PACKED_IMAGES_H_

// The integration tests' data set: a generated folder of JPEGs (pack/image_generator.h) packed
// into shards (pack/packer.h), as `stoker-pack` would.

#include "absl/status/statusor.h"
#include "pack/image_generator.h"
#include "pack/packer.h"

namespace stoker {

class Storage;  // data/storage_backend.h

// Generates `images`, then packs images.dir with `pack` (its `input` is set here) through
// `storage` (where pack.output_dir may be an s3:// prefix).
absl::StatusOr<PackSummary> PackGeneratedImages(const Storage& storage,
                                                const ImageFolderSpec& images, PackOptions pack);

}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_PACKED_IMAGES_H_
