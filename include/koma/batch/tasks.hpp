// The batch task of every per-file pipeline: what `koma batch COMMAND` and koma.batch (the local
// pool and each Dask worker) run on one item. Written once here so the CLI and Python cannot drift.
#pragma once

#include "koma/batch/batch.hpp"
#include "koma/batch/convert_file.hpp"
#include "koma/batch/gait_file.hpp"
#include "koma/batch/pipelines.hpp"
#include "koma/batch/render_file.hpp"
#include "koma/batch/retime_file.hpp"

namespace koma::batch {

/// run_keys_file() on the item (the report names the item's input), its keys_figures().
Task keys_task(const KeysJob& job);
/// run_cartoon_file() on the item, its summary.
Task cartoon_task(const CartoonJob& job);
/// run_retime_file() on the item, its retime_figures().
Task retime_task(const RetimeJob& job);
/// run_convert_file() on the item, its convert_figures().
Task convert_task(const ConvertJob& job);
/// run_gait_apply_file() on the item, its summary; the warnings are the reader's and the apply's.
Task gait_apply_task(const GaitApplyJob& job);
/// run_gait_style_file() on the item (a walk, or a gait file: a .json input writes .bvh unless
/// PlanSettings::output_extension says otherwise), its summary. Throws Error(invalid_settings,
/// "csv") for a job.csv path (every file would write it; use job.csv_beside_output).
Task gait_style_task(const GaitStyleJob& job);
/// What a gait-style batch finds in folders and globs (PlanSettings::extensions): the motion
/// formats and gait files (.gait.json; other .json files, such as adverbs, are left alone).
std::vector<std::string> gait_style_extensions();
/// run_render_file() on the item (its output: .mp4, .gif, or a folder of PNG frames ending in '/'),
/// its render_figures() plus "notes" when there are any; the warnings are the pipeline's. The files
/// a single render names get their batch meaning: `job.keys` is a folder of `koma keys` reports
/// that mirrors the inputs (the item's report is keys / relative path with the extension .json);
/// `job.compare` is one file for every item, or a folder that mirrors the inputs (keys / relative
/// path, else the same name with the extension .bvh, .glb, .gltf or .fbx). Each item runs isolated
/// on its thread (no other item is taken up while it waits) and the toon look opens its own OpenGL
/// context per item, current on that thread only. Throws Error(invalid_settings) for the job's
/// validate() errors and Error(invalid_settings, "keys") when `job.keys` is not a folder.
Task render_task(const RenderJob& job);
/// How a render batch names its outputs: output_formats ".mp4", ".gif", ".png" (a folder of PNG
/// frames), output_extension `to` (checked by plan()), or when empty ".mp4" (".png" for transparent
/// cels, which are PNG frames only). Throws as render_task() does for a job a batch cannot run.
PlanSettings render_plan(const RenderJob& job, const std::string& to = "");

}  // namespace koma::batch
