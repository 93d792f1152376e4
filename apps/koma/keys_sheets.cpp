#include "keys_sheets.hpp"

#include <fmt/format.h>

#include "koma/core/fk.hpp"
#include "koma/render/sheet.hpp"

namespace koma::cli {

KeySheets render_key_sheets(const Motion& held, const keys::KeySelection& selection, const std::string& label,
                            bool contact, bool xsheet) {
  KeySheets out;
  const std::vector<int> drawings = keys::drawing_frames(selection);
  if (contact) {
    // The held motion shows, on each drawing's first frame, exactly the pose that drawing holds
    // (with layers: each layer's latest key), so the sheet shows what was written.
    render::ContactSheetSettings cs;
    cs.frame_rate = held.frame_rate;
    cs.title = fmt::format("Key poses - {} ({} drawings)", label, drawings.size());
    out.contact = render::render_contact_sheet(held.skeleton, forward_kinematics(held), drawings, cs);
  }
  if (xsheet) {
    render::ExposureSheetSettings xs;
    xs.frame_rate = held.frame_rate;
    xs.title = fmt::format("Exposure sheet - {}", label);
    out.xsheet = render::render_exposure_sheet(render::drawing_numbers(drawings, held.frame_count), xs);
  }
  return out;
}

}  // namespace koma::cli
