#include "pack/coco_annotations.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "pack/coco_masks.h"

namespace stoker {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// Integers beyond 2^53 do not survive JSON's doubles.
constexpr double kMaxJsonInteger = 9007199254740992.0;

// Reads values out of the parsed file, each error naming the file and where in it.
class CocoReader {
 public:
  explicit CocoReader(absl::string_view file) : file_(file) {}

  absl::Status Error(absl::string_view where, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", where, ": ", what));
  }

  absl::StatusOr<const Value*> Required(const Struct& object, const std::string& key,
                                        absl::string_view where) const {
    const auto it = object.fields().find(key);
    if (it == object.fields().end()) return Error(where, absl::StrCat("has no \"", key, "\""));
    return &it->second;
  }

  absl::StatusOr<const Struct*> Object(const Value& value, absl::string_view where) const {
    if (!value.has_struct_value()) return Error(where, "is not an object");
    return &value.struct_value();
  }

  absl::StatusOr<const ListValue*> List(const Struct& object, const std::string& key,
                                        absl::string_view where) const {
    ASSIGN_OR_RETURN(const Value* value, Required(object, key, where));
    if (!value->has_list_value()) return Error(where, absl::StrCat("\"", key, "\" is not a list"));
    return &value->list_value();
  }

  absl::StatusOr<double> Number(const Value& value, absl::string_view where,
                                absl::string_view what) const {
    if (value.kind_case() != Value::kNumberValue || !std::isfinite(value.number_value())) {
      return Error(where, absl::StrCat(what, " is not a finite number"));
    }
    return value.number_value();
  }

  absl::StatusOr<int64_t> Integer(const Struct& object, const std::string& key,
                                  absl::string_view where) const {
    ASSIGN_OR_RETURN(const Value* value, Required(object, key, where));
    const std::string what = absl::StrCat("\"", key, "\"");
    ASSIGN_OR_RETURN(const double number, Number(*value, where, what));
    if (number != std::floor(number) || std::fabs(number) > kMaxJsonInteger) {
      return Error(where, absl::StrCat(what, " is not an integer"));
    }
    return static_cast<int64_t>(number);
  }

  absl::StatusOr<std::vector<double>> Numbers(const ListValue& list, absl::string_view where,
                                              absl::string_view what) const {
    std::vector<double> numbers;
    numbers.reserve(list.values_size());
    for (const Value& value : list.values()) {
      ASSIGN_OR_RETURN(const double number, Number(value, where, absl::StrCat(what, "'s values")));
      numbers.push_back(number);
    }
    return numbers;
  }

 private:
  const std::string file_;
};

std::string Size(const CocoImage& image) {
  return absl::StrCat("image ", image.id, " (", image.width, "x", image.height, ")");
}

bool Inside(double x, double y, const CocoImage& image) {
  return x >= 0 && y >= 0 && x <= image.width && y <= image.height;
}

// A file name that stays inside the images folder.
bool IsContainedRelativePath(const std::string& name) {
  if (name.empty() || std::filesystem::path(name).is_absolute()) return false;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part == "..") return false;
  }
  return true;
}

absl::StatusOr<std::vector<std::pair<int64_t, std::string>>> ParseCategories(
    const CocoReader& reader, const Struct& root) {
  ASSIGN_OR_RETURN(const ListValue* list, reader.List(root, "categories", "the file"));
  std::map<int64_t, std::string> categories;
  for (int i = 0; i < list->values_size(); ++i) {
    const std::string where = absl::StrCat("categories[", i, "]");
    ASSIGN_OR_RETURN(const Struct* category, reader.Object(list->values(i), where));
    ASSIGN_OR_RETURN(const int64_t id, reader.Integer(*category, "id", where));
    if (id < 0 || id > kMaxCocoCategoryId) {
      return reader.Error(where, absl::StrCat("id ", id, " is not in 0..", kMaxCocoCategoryId));
    }
    ASSIGN_OR_RETURN(const Value* name, reader.Required(*category, "name", where));
    if (!name->has_string_value()) return reader.Error(where, "\"name\" is not a string");
    if (!categories.emplace(id, name->string_value()).second) {
      return reader.Error(where, absl::StrCat("category id ", id, " is listed twice"));
    }
  }
  return std::vector<std::pair<int64_t, std::string>>(categories.begin(), categories.end());
}

absl::StatusOr<CocoImage> ParseImage(const CocoReader& reader, const Value& value, size_t index,
                                     const CocoLimits& limits) {
  const std::string where = absl::StrCat("images[", index, "]");
  ASSIGN_OR_RETURN(const Struct* object, reader.Object(value, where));
  CocoImage image;
  image.index = index;
  ASSIGN_OR_RETURN(image.id, reader.Integer(*object, "id", where));
  const std::string named = absl::StrCat(where, " (id ", image.id, ")");
  ASSIGN_OR_RETURN(const Value* file_name, reader.Required(*object, "file_name", named));
  if (!file_name->has_string_value() || !IsContainedRelativePath(file_name->string_value())) {
    return reader.Error(named, "\"file_name\" is not a relative path inside the images folder");
  }
  image.file_name = file_name->string_value();
  ASSIGN_OR_RETURN(const int64_t width, reader.Integer(*object, "width", named));
  ASSIGN_OR_RETURN(const int64_t height, reader.Integer(*object, "height", named));
  if (width <= 0 || height <= 0 || width > UINT32_MAX || height > UINT32_MAX ||
      static_cast<uint64_t>(width) * static_cast<uint64_t>(height) > limits.max_pixels) {
    return reader.Error(named, absl::StrCat("size ", width, "x", height, " is not in 1..",
                                            limits.max_pixels, " pixels (--max-pixels)"));
  }
  image.width = static_cast<uint32_t>(width);
  image.height = static_cast<uint32_t>(height);
  return image;
}

absl::Status ParsePolygons(const CocoReader& reader, const ListValue& list, const CocoImage& image,
                           absl::string_view where, CocoSegmentation* segmentation) {
  size_t points = 0;
  for (int p = 0; p < list.values_size(); ++p) {
    const std::string what = absl::StrCat("segmentation[", p, "]");
    if (!list.values(p).has_list_value()) return reader.Error(where, what + " is not a list");
    ASSIGN_OR_RETURN(std::vector<double> xy,
                     reader.Numbers(list.values(p).list_value(), where, what));
    if (xy.size() % 2 != 0 || xy.size() < 6) {
      return reader.Error(
          where, absl::StrCat(what, " has ", xy.size(), " coordinates, not an even number >= 6"));
    }
    points += xy.size() / 2;
    if (points > kMaxCocoPolygonPoints) {
      return reader.Error(where, absl::StrCat("the segmentation has over ", kMaxCocoPolygonPoints,
                                              " polygon points"));
    }
    for (size_t k = 0; k < xy.size(); k += 2) {
      if (!Inside(xy[k], xy[k + 1], image)) {
        return reader.Error(where, absl::StrCat(what, " point ", k / 2, " (", xy[k], ", ",
                                                xy[k + 1], ") lies outside ", Size(image)));
      }
    }
    segmentation->polygons.push_back(std::move(xy));
  }
  return absl::OkStatus();
}

absl::Status ParseRle(const CocoReader& reader, const Struct& rle, const CocoImage& image,
                      absl::string_view where, CocoSegmentation* segmentation) {
  ASSIGN_OR_RETURN(const ListValue* size, reader.List(rle, "size", where));
  ASSIGN_OR_RETURN(const std::vector<double> hw, reader.Numbers(*size, where, "\"size\""));
  if (hw.size() != 2 || hw[0] != image.height || hw[1] != image.width) {
    return reader.Error(
        where, absl::StrCat("the segmentation's size is not [height, width] of ", Size(image)));
  }
  ASSIGN_OR_RETURN(const Value* counts, reader.Required(rle, "counts", where));
  if (counts->has_string_value()) {
    absl::StatusOr<std::vector<uint32_t>> decoded = DecodeCocoRleString(counts->string_value());
    if (!decoded.ok()) return reader.Error(where, decoded.status().message());
    segmentation->rle_counts = *std::move(decoded);
  } else if (counts->has_list_value()) {
    for (const Value& value : counts->list_value().values()) {
      ASSIGN_OR_RETURN(const double count, reader.Number(value, where, "\"counts\"' values"));
      if (count < 0 || count > UINT32_MAX || count != std::floor(count)) {
        return reader.Error(where, "\"counts\" holds a value that is not a count");
      }
      segmentation->rle_counts.push_back(static_cast<uint32_t>(count));
    }
  } else {
    return reader.Error(where, "\"counts\" is neither a list nor a string");
  }
  uint64_t sum = 0;
  for (uint32_t count : segmentation->rle_counts) sum += count;
  if (sum != uint64_t{image.height} * image.width) {
    return reader.Error(
        where, absl::StrCat("the segmentation's counts sum to ", sum, ", not the ",
                            image.height * uint64_t{image.width}, " pixels of ", Size(image)));
  }
  return absl::OkStatus();
}

// The segmentation into `segmentation`, left empty when the annotation has none (absent or an
// empty list).
absl::Status ParseSegmentation(const CocoReader& reader, const Struct& annotation,
                               const CocoImage& image, absl::string_view where,
                               std::optional<CocoSegmentation>* segmentation) {
  const auto it = annotation.fields().find("segmentation");
  if (it == annotation.fields().end()) return absl::OkStatus();
  if (it->second.has_list_value()) {
    if (it->second.list_value().values_size() == 0) return absl::OkStatus();
    return ParsePolygons(reader, it->second.list_value(), image, where, &segmentation->emplace());
  }
  if (it->second.has_struct_value()) {
    return ParseRle(reader, it->second.struct_value(), image, where, &segmentation->emplace());
  }
  return reader.Error(where, "\"segmentation\" is neither polygons nor RLE");
}

absl::StatusOr<std::vector<float>> ParseKeypoints(const CocoReader& reader,
                                                  const Struct& annotation, const CocoImage& image,
                                                  absl::string_view where,
                                                  const CocoLimits& limits) {
  const auto it = annotation.fields().find("keypoints");
  if (it == annotation.fields().end()) return std::vector<float>();
  if (!it->second.has_list_value()) return reader.Error(where, "\"keypoints\" is not a list");
  ASSIGN_OR_RETURN(const std::vector<double> values,
                   reader.Numbers(it->second.list_value(), where, "\"keypoints\""));
  if (values.size() % 3 != 0 || values.size() / 3 > limits.max_keypoints) {
    return reader.Error(where, absl::StrCat("\"keypoints\" holds ", values.size(),
                                            " values, not 3 per keypoint for at most ",
                                            limits.max_keypoints, " keypoints"));
  }
  for (size_t k = 0; k < values.size(); k += 3) {
    const double v = values[k + 2];
    if (v != 0 && v != 1 && v != 2) {
      return reader.Error(
          where, absl::StrCat("keypoint ", k / 3, " has visibility ", v, ", not 0, 1 or 2"));
    }
    if (v != 0 && !Inside(values[k], values[k + 1], image)) {
      return reader.Error(where, absl::StrCat("keypoint ", k / 3, " (", values[k], ", ",
                                              values[k + 1], ") lies outside ", Size(image)));
    }
  }
  return std::vector<float>(values.begin(), values.end());
}

// The images by id, and their index in `images` by id.
struct ImageTable {
  std::vector<CocoImage> images;
  std::map<int64_t, size_t> by_id;
};

absl::StatusOr<ImageTable> ParseImages(const CocoReader& reader, const Struct& root,
                                       const CocoLimits& limits) {
  ASSIGN_OR_RETURN(const ListValue* list, reader.List(root, "images", "the file"));
  ImageTable table;
  for (int i = 0; i < list->values_size(); ++i) {
    ASSIGN_OR_RETURN(CocoImage image, ParseImage(reader, list->values(i), i, limits));
    if (!table.by_id.emplace(image.id, 0).second) {
      return reader.Error(absl::StrCat("images[", i, "]"),
                          absl::StrCat("image id ", image.id, " is listed twice"));
    }
    table.images.push_back(std::move(image));
  }
  std::sort(table.images.begin(), table.images.end(),
            [](const CocoImage& a, const CocoImage& b) { return a.id < b.id; });
  for (size_t i = 0; i < table.images.size(); ++i) table.by_id[table.images[i].id] = i;
  return table;
}

// Parses annotations[index] and adds it to its image unless it is a crowd.
absl::Status AddAnnotation(const CocoReader& reader, const Value& value, size_t index,
                           const std::map<int64_t, std::string>& categories,
                           const CocoLimits& limits, ImageTable* table) {
  std::string where = absl::StrCat("annotations[", index, "]");
  ASSIGN_OR_RETURN(const Struct* object, reader.Object(value, where));
  CocoAnnotation annotation;
  ASSIGN_OR_RETURN(annotation.id, reader.Integer(*object, "id", where));
  absl::StrAppend(&where, " (id ", annotation.id, ")");
  ASSIGN_OR_RETURN(const int64_t image_id, reader.Integer(*object, "image_id", where));
  const auto found = table->by_id.find(image_id);
  if (found == table->by_id.end()) {
    return reader.Error(where, absl::StrCat("image_id ", image_id, " is not in images"));
  }
  CocoImage& image = table->images[found->second];
  ASSIGN_OR_RETURN(annotation.category_id, reader.Integer(*object, "category_id", where));
  if (categories.count(annotation.category_id) == 0) {
    return reader.Error(
        where, absl::StrCat("category_id ", annotation.category_id, " is not in categories"));
  }
  ASSIGN_OR_RETURN(const ListValue* bbox, reader.List(*object, "bbox", where));
  ASSIGN_OR_RETURN(const std::vector<double> b, reader.Numbers(*bbox, where, "\"bbox\""));
  if (b.size() != 4) return reader.Error(where, "\"bbox\" does not hold 4 numbers");
  if (b[2] < 0 || b[3] < 0 || !Inside(b[0], b[1], image) ||
      !Inside(b[0] + b[2], b[1] + b[3], image)) {
    return reader.Error(where, absl::StrCat("bbox [", b[0], ", ", b[1], ", ", b[2], ", ", b[3],
                                            "] lies outside ", Size(image)));
  }
  annotation.box = {static_cast<float>(b[0]), static_cast<float>(b[1]),
                    static_cast<float>(b[0] + b[2]), static_cast<float>(b[1] + b[3])};
  RETURN_IF_ERROR(ParseSegmentation(reader, *object, image, where, &annotation.segmentation));
  ASSIGN_OR_RETURN(annotation.keypoints, ParseKeypoints(reader, *object, image, where, limits));
  int64_t crowd = 0;
  if (object->fields().count("iscrowd") != 0) {
    ASSIGN_OR_RETURN(crowd, reader.Integer(*object, "iscrowd", where));
  }
  if (crowd != 0 && crowd != 1) return reader.Error(where, "\"iscrowd\" is not 0 or 1");
  if (crowd == 1) return absl::OkStatus();
  if (image.annotations.size() == limits.max_instances) {
    return reader.Error(where, absl::StrCat("image ", image.id, " has over ", limits.max_instances,
                                            " annotations (not crowds)"));
  }
  image.annotations.push_back(std::move(annotation));
  return absl::OkStatus();
}

// Every kept annotation has a segmentation or none has; keypoints likewise, as many each; an
// image's masks fit the budget.
absl::Status CheckUniformTargets(const CocoReader& reader, const CocoLimits& limits,
                                 CocoDataset* dataset) {
  const CocoAnnotation* first = nullptr;
  for (const CocoImage& image : dataset->images) {
    for (const CocoAnnotation& annotation : image.annotations) {
      if (first == nullptr) first = &annotation;
      const std::string where = absl::StrCat("annotation id ", annotation.id);
      if (annotation.segmentation.has_value() != first->segmentation.has_value()) {
        return reader.Error(where,
                            absl::StrCat("has ", annotation.segmentation ? "a" : "no",
                                         " segmentation while annotation id ", first->id,
                                         annotation.segmentation ? " has none" : " has one"));
      }
      if (annotation.keypoints.size() != first->keypoints.size()) {
        return reader.Error(where, absl::StrCat("has ", annotation.keypoints.size() / 3,
                                                " keypoints while annotation id ", first->id,
                                                " has ", first->keypoints.size() / 3));
      }
    }
  }
  dataset->has_masks = first != nullptr && first->segmentation.has_value();
  dataset->keypoints_per_instance =
      first == nullptr ? 0 : static_cast<uint32_t>(first->keypoints.size() / 3);
  for (const CocoImage& image : dataset->images) {
    const uint64_t bytes = image.annotations.size() * uint64_t{image.width} * image.height;
    if (dataset->has_masks && bytes > limits.max_mask_bytes) {
      return reader.Error(absl::StrCat("images[", image.index, "] (id ", image.id, ")"),
                          absl::StrCat("its ", image.annotations.size(), " masks of ", image.width,
                                       "x", image.height, " would hold ", bytes,
                                       " bytes, over the bound of ", limits.max_mask_bytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CocoDataset> ParseCocoInstances(absl::string_view json, absl::string_view file,
                                               const CocoLimits& limits) {
  const CocoReader reader(file);
  Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    // The parser's first line says what is wrong (it gives no offset); the lines after it
    // quote the file.
    std::string reason(parsed.message().data(), parsed.message().size());
    reason.resize(std::min(reason.size(), reason.find('\n')));
    return absl::InvalidArgumentError(absl::StrCat(file, ": malformed JSON: ", reason));
  }
  CocoDataset dataset;
  ASSIGN_OR_RETURN(dataset.categories, ParseCategories(reader, root));
  const std::map<int64_t, std::string> categories(dataset.categories.begin(),
                                                  dataset.categories.end());
  ASSIGN_OR_RETURN(ImageTable table, ParseImages(reader, root, limits));
  ASSIGN_OR_RETURN(const ListValue* annotations, reader.List(root, "annotations", "the file"));
  for (int i = 0; i < annotations->values_size(); ++i) {
    RETURN_IF_ERROR(AddAnnotation(reader, annotations->values(i), i, categories, limits, &table));
  }
  dataset.images = std::move(table.images);
  RETURN_IF_ERROR(CheckUniformTargets(reader, limits, &dataset));
  return dataset;
}

}  // namespace stoker
