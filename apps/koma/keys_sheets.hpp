// The pictures `koma keys` can write for any skeleton clip: the contact sheet of the drawings and
// the exposure sheet as a PNG. Rendered in memory first so nothing is written when one fails.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "koma/core/motion.hpp"
#include "koma/io/bvh.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/spacing.hpp"
#include "koma/render/figure.hpp"
#include "koma/toon/renderer.hpp"

namespace koma::cli {

/// The images, empty when not asked for.
struct KeySheets {
  render::Image contact;  ///< one cell per drawing (every layer's keys), the pose shown on that frame
  render::Image xsheet;   ///< the timesheet of the drawings
};

/// Renders the sheets of `held` (the held or spaced motion at the output rate) and its selection;
/// `label` titles them (the input file's name). With `spacing` the drawings are its keys and
/// inbetweens, the keys circled on the exposure sheet beside each gap's chart. Only the ones whose
/// flag is set. The contact sheet is in the toon look (`character`, the file's, else a generated
/// body) when OpenGL can run, else sticks with a warning on stderr; its fast drawings are smeared
/// as `smear` says (toon look only).
KeySheets render_key_sheets(const Motion& held, const std::shared_ptr<const io::GltfScene>& character,
                            const keys::KeySelection& selection, const std::optional<keys::Spacing>& spacing,
                            const std::string& label, bool contact, bool xsheet,
                            toon::Smear smear = toon::Smear::off);

}  // namespace koma::cli
