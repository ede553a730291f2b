#include "coordinator/leadership.h"

namespace stoker {
namespace {

class Sole : public Leadership {
 public:
  LeaderView view() const override { return LeaderView{}; }
};

}  // namespace

Leadership* SoleLeadership() {
  static Sole* const sole = new Sole;
  return sole;
}

}  // namespace stoker
