#ifndef STOKER_DATA_TAR_READER_H_
#define STOKER_DATA_TAR_READER_H_

// WebDataset shards: a POSIX (ustar, GNU or pax) tar whose files are grouped into samples by key,
// the path up to the first dot of the file name ("train/n0153.jpg" and "train/n0153.cls" are the
// image and label of key "train/n0153"). A sample is a key with an image (.jpg, .jpeg, .png or
// .webp); its label is the decimal integer in its .cls file, or -1 when it has none. Samples keep
// the order of their images in the archive.
//
// Pass-through fields (data/sample_fields.h) are other files of the key: "train/n0153.txt" is
// extension "txt" of key "train/n0153" (the extension is everything after the first dot of the
// file name, lowercased: "x.seg.png" has "seg.png"). Only the extensions asked for are indexed, so
// an index holds a fixed number of locations per sample whatever else the archive carries.
//
// Loading reads every 512-byte header once (and each .cls file). A truncated or damaged archive
// (a bad header checksum, a file running past the end) ends the scan there: the index keeps the
// samples before the damage and says where it is, like a recovered stoker shard.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/shard_reader.h"
#include "data/storage.h"

namespace stoker {

// Sample locations point at the image bytes; labels are filled. `keys`, when not null, receives
// each sample's key. `field_extensions`: the extensions whose files are indexed as the samples'
// fields (ShardIndex.fields, in this order). Errors: those of the file.
absl::StatusOr<ShardIndex> LoadTarShardIndex(const RandomAccessFile& file,
                                             std::vector<std::string>* keys = nullptr,
                                             const std::vector<std::string>& field_extensions = {});

// True when the location names a tar shard (ends in ".tar").
bool IsTarShard(const std::string& location);

}  // namespace stoker

#endif  // STOKER_DATA_TAR_READER_H_
