// The batch runner: a oneTBB parallel_pipeline (no scheduler of our own). A serial input stage
// hands out the next item, largest file first; a parallel stage runs the command on it. At most
// `jobs` items are in flight, so at most `jobs` files are in memory.
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <mutex>
#include <numeric>
#include <optional>
#include <system_error>

#include "koma/batch/batch.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/child_process.hpp"
#include "koma/core/error.hpp"

namespace koma::batch {

namespace fs = std::filesystem;

std::string_view to_string(Status status) noexcept { return kStatusNames.name(status); }

void RunSettings::validate() const {
  if (jobs < 0 || jobs > 1024) {
    throw Error(ErrorCode::invalid_settings, "jobs", fmt::format("{} jobs: expected 1 to 1024, or 0 for the cores", jobs));
  }
}

namespace {

// An output is complete when it exists and is not older than its input (outputs appear only by
// an atomic rename, so an existing output is never partial).
bool output_complete(const Item& item) {
  std::error_code ec;
  const auto out_time = fs::last_write_time(item.output, ec);
  if (ec) return false;
  const auto in_time = fs::last_write_time(item.input, ec);
  return !ec && out_time >= in_time;
}

void run_one(const Item& item, const Task& task, const std::function<bool()>& cancelled, Record& rec) {
  rec.item = item;
  const auto t0 = std::chrono::steady_clock::now();
  const auto progress = [&cancelled](double) {
    if (cancelled && cancelled()) throw Cancelled();
  };
  try {
    std::error_code ec;
    // The folder the output goes in (an output folder of frames, "walk/", is made by the task).
    const fs::path folder = (item.output.has_filename() ? item.output : item.output.parent_path()).parent_path();
    if (!folder.empty()) fs::create_directories(folder, ec);
    if (ec) throw Error(ErrorCode::io, folder.string(), fmt::format("cannot create the output folder: {}", ec.message()));
    rec.figures = task(item, progress, rec.warnings);
    rec.status = Status::ok;
  } catch (const Cancelled&) {
    rec.status = Status::cancelled;
  } catch (const Error& e) {
    rec.status = Status::failed;
    rec.error_code = std::string(to_string(e.code()));
    rec.error_context = e.context();
    rec.error_message = e.message();
  } catch (const std::exception& e) {  // a bug or out of memory: this file fails, the batch goes on
    rec.status = Status::failed;
    rec.error_code = "internal";
    rec.error_message = e.what();
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void add(Counts& c, Status s) {
  switch (s) {
    case Status::ok: ++c.ok; break;
    case Status::failed: ++c.failed; break;
    case Status::skipped: ++c.skipped; break;
    case Status::cancelled: ++c.cancelled; break;
    case Status::pending: break;
  }
}

}  // namespace

Record run_item(const Item& item, const Task& task, bool resume, const std::function<bool()>& cancelled) {
  Record rec;
  rec.item = item;
  if (resume && output_complete(item)) {
    rec.status = Status::skipped;
    return rec;
  }
  run_one(item, task, cancelled, rec);
  return rec;
}

namespace {

// "on: 2 -> 3, layers: \"\" -> \"legs:3\"" for the fields of two settings objects that differ.
std::string settings_difference(const nlohmann::json& was, const nlohmann::json& now) {
  std::string out;
  auto add = [&](const std::string& key, const nlohmann::json* a, const nlohmann::json* b) {
    out += fmt::format("{}{}: {} -> {}", out.empty() ? "" : ", ", key, a ? a->dump() : "(none)", b ? b->dump() : "(none)");
  };
  if (!was.is_object() || !now.is_object()) return fmt::format("{} -> {}", was.dump(), now.dump());
  for (const auto& [key, value] : was.items()) {
    auto it = now.find(key);
    if (it == now.end()) add(key, &value, nullptr);
    else if (*it != value) add(key, &value, &*it);
  }
  for (const auto& [key, value] : now.items()) {
    if (!was.contains(key)) add(key, nullptr, &value);
  }
  return out;
}

}  // namespace

void claim_output_dir(const std::filesystem::path& output_dir, std::string_view command, std::string_view front_end,
                      const nlohmann::json& settings, bool resume) {
  const fs::path path = output_dir / kManifestName;
  const nlohmann::json now = {{"command", std::string(command)}, {"front_end", std::string(front_end)}, {"settings", settings}};
  std::error_code ec;
  if (resume && fs::is_regular_file(path, ec)) {
    nlohmann::json was;
    try {
      was = nlohmann::json::parse(read_file(path));
    } catch (const nlohmann::json::exception&) {
      was = nullptr;
    }
    std::string why;
    if (!was.is_object()) why = "its record of the batch is not readable";
    else if (was.value("command", "") != command) why = fmt::format("it was filled by `batch {}`", was.value("command", "?"));
    else if (was.value("front_end", "") != front_end)
      why = fmt::format("it was filled from {} (settings are compared within one front end)", was.value("front_end", "?"));
    else if (was["settings"] != settings) why = fmt::format("its settings differ: {}", settings_difference(was["settings"], settings));
    if (!why.empty()) {
      throw Error(ErrorCode::invalid_settings, "resume",
                  fmt::format("cannot resume into {}: {}; its finished outputs would be kept though they no longer "
                              "match. Run without resume to redo every file, or use another output folder",
                              output_dir.string(), why));
    }
  }
  write_file_atomic(path, now.dump(2) + "\n");
}

Counts count(const std::vector<Record>& records) {
  Counts c;
  c.total = static_cast<int>(records.size());
  for (const Record& r : records) add(c, r.status);
  return c;
}

std::vector<Record> run(const std::vector<Item>& items, const RunSettings& settings, const Task& task,
                        const OnFile& on_file, const std::function<bool()>& cancelled) {
  settings.validate();
  std::vector<Record> records(items.size());
  for (size_t i = 0; i < items.size(); ++i) records[i].item = items[i];
  // Largest first: the long takes start early and the short ones fill the gaps at the end.
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items[a].bytes > items[b].bytes; });

  // Items read FBX and glTF in forked children (run_isolated); under an allocator that does not
  // survive a fork from a busy thread (ASan builds, kForkSafeAllocator) they run one at a time.
  const int jobs = !kForkSafeAllocator ? 1 : settings.jobs > 0 ? settings.jobs : tbb::info::default_concurrency();
  std::mutex mutex;  // serialises on_file and the counts
  Counts counts;
  counts.total = static_cast<int>(items.size());
  const auto t0 = std::chrono::steady_clock::now();
  const auto finish = [&](const Record& rec) {
    std::lock_guard<std::mutex> lock(mutex);
    add(counts, rec.status);
    counts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (on_file) on_file(rec, counts);
  };
  size_t next = 0;
  // More jobs than cores is allowed (slow storage): lift oneTBB's worker limit for this run only.
  std::optional<tbb::global_control> allow;
  if (jobs > tbb::info::default_concurrency()) {
    allow.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(jobs));
  }
  tbb::task_arena arena(jobs);
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<size_t>(jobs),
        tbb::make_filter<void, Record*>(tbb::filter_mode::serial_in_order,
                                        [&](tbb::flow_control& fc) -> Record* {
                                          while (next < order.size()) {
                                            if (cancelled && cancelled()) break;
                                            Record* rec = &records[order[next++]];
                                            if (settings.resume && output_complete(rec->item)) {
                                              rec->status = Status::skipped;
                                              finish(*rec);
                                              continue;
                                            }
                                            return rec;
                                          }
                                          fc.stop();
                                          return nullptr;
                                        }) &
            tbb::make_filter<Record*, void>(tbb::filter_mode::parallel, [&](Record* rec) {
              run_one(rec->item, task, cancelled, *rec);
              finish(*rec);
            }));
  });
  return records;
}

nlohmann::json record_json(const Record& r) {
  nlohmann::json f = {{"input", r.item.input.string()}, {"relative", r.item.relative.string()},
                      {"output", r.item.output.string()}, {"status", std::string(to_string(r.status))},
                      {"seconds", r.seconds}, {"figures", r.figures}, {"warnings", r.warnings}};
  if (!r.item.animation.empty()) f["animation"] = r.item.animation;
  if (r.status == Status::failed) {
    f["error"] = {{"code", r.error_code}, {"context", r.error_context}, {"message", r.error_message}};
  }
  return f;
}

nlohmann::json report(std::string_view command, const nlohmann::json& settings, const RunSettings& run_settings,
                      const nlohmann::json& files, double seconds) {
  nlohmann::json counts = {{"total", files.size()}, {"ok", 0}, {"failed", 0}, {"skipped", 0}, {"cancelled", 0}, {"pending", 0}};
  for (const auto& f : files) {
    const std::string status = f.at("status").get<std::string>();
    if (counts.contains(status)) counts[status] = counts[status].get<int>() + 1;
  }
  return {{"command", std::string(command)},
          {"settings", settings},
          {"jobs", run_settings.jobs > 0 ? run_settings.jobs : tbb::info::default_concurrency()},
          {"resume", run_settings.resume},
          {"counts", counts},
          {"seconds", seconds},
          {"files", files}};
}

nlohmann::json report(std::string_view command, const nlohmann::json& settings, const RunSettings& run_settings,
                      const std::vector<Record>& records, double seconds) {
  nlohmann::json files = nlohmann::json::array();
  for (const Record& r : records) files.push_back(record_json(r));
  return report(command, settings, run_settings, files, seconds);
}

}  // namespace koma::batch
