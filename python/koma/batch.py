"""koma.batch: whole motion libraries through one command, locally or on a Dask cluster.

    >>> import koma.batch
    >>> table = koma.batch.run("keys", ["mocap/"], "held/", on=2)            # the local oneTBB pool
    >>> from dask.distributed import Client, LocalCluster
    >>> with Client(LocalCluster(n_workers=2, threads_per_worker=1)) as client:
    ...     table = koma.batch.run("keys", ["mocap/"], "held/", on=2, client=client)

``run`` gives the same outputs, byte for byte, as ``koma batch COMMAND`` with the same settings,
and returns the same summary: one record per file (input, relative, output, status, seconds,
figures, error, warnings) as a pandas DataFrame when pandas is installed, else a list of dicts;
the whole report (counts, settings) is in ``.attrs["report"]`` (DataFrame) or ``last_report()``.

Settings are plain values named like the C++ fields (docs/python.md): for ``keys`` any
``koma.keys.KeySettings`` field (``on=2``, ``keys=40``, ``selector="anneal"``,
``constraints={"min_hold": 2}``) plus ``output_rate`` (fps, default 24; 0 = the file's own),
``unit``, ``animation`` and ``lengths_in_file_unit``, and spacing charts as
``spacing={"on": 2, "chart": "slow-in-out", "gaps": {12: "halves"}}`` (``koma.spacing_settings``'s
arguments; with a key count) and ``chart_sheet``; for ``cartoon`` any
``koma.cartoon.CartoonSettings`` field (``keep_feet=True``, ``strength=12``,
``sigma_seconds=0.15``) plus ``unit`` and ``animation``; for ``retime`` ``like`` (an example, a folder
or a saved timing .json), ``roles`` and any ``koma.timing.RetimeSettings`` field (``speed="input"``,
``output_rate=30``, ``on_beat=True``) plus ``unit`` and ``animation``; for ``convert``
``range`` ("100:340"), ``output_rate``, ``out_unit``, ``unit`` and ``animation``; for ``gait-apply``
``adverbs`` (["tired.adverb.json:0.8", ...]), ``roles`` and any ``koma.gait.ApplySettings`` field
(``fixed_period=1.2``, ``plant_feet=False``) plus ``unit`` and ``animation``; for ``gait-style``
(walks and ``.gait.json`` gait files, which write ``.bvh``) ``adverbs``, ``then``
(["run.gait.json@4", ...]), ``skeleton`` (a motion file whose character to drive), ``csv=True``
(each output's angles beside it), any ``koma.gait.SynthSettings`` field (``seconds=8``,
``frame_rate=30``, ``stride=1.2``, ``speed=0.8``, ``loop=False``, ``in_place=True``), ``cycle`` and
``fourier`` dicts (``koma.gait.CycleSettings`` / ``FourierSettings`` fields) plus ``unit`` and
``animation``; for ``render`` ``koma.render_file``'s settings as plain values (``look="sticks"``,
``size="640x360"``, ``camera="side,follow"``, ``tones=3``, ``compare=`` one file or a folder that
mirrors the inputs, ``keys=`` a folder of ``koma keys`` reports that mirrors them), the outputs
``.mp4`` or, with ``to="gif"`` / ``to="png"``, GIFs or folders of PNG frames. Lengths are metres
unless ``lengths_in_file_unit``.

With a ``dask.distributed.Client`` the files are mapped over the cluster: each task carries only
the paths and this settings dict (nothing else is pickled); workers import koma and read and write
the shared storage the paths point to. Without one, the files run on this machine's oneTBB pool
(``jobs`` threads, default the cores) with the GIL released.
"""
import os as _os
import time as _time

from . import _koma

_cpp = _koma._batch

COMMANDS = ("keys", "cartoon", "retime", "convert", "gait-apply", "gait-style", "render")
_last_report = None


def _set_fields(obj, fields, where):
    """Sets attributes of a bound settings object from a dict (nested dicts for nested settings;
    enum fields accept their member names as strings)."""
    for name, value in fields.items():
        if name.startswith("_") or not hasattr(obj, name):
            raise TypeError(f"{where}: unknown setting '{name}'")
        current = getattr(obj, name)
        if isinstance(value, dict):
            _set_fields(current, value, f"{where}.{name}")
            setattr(obj, name, current)
        elif isinstance(value, str) and hasattr(type(current), "__members__"):
            members = type(current).__members__
            if value not in members:
                raise ValueError(f"{where}.{name}: unknown value '{value}' (expected one of {', '.join(members)})")
            setattr(obj, name, members[value])
        else:
            setattr(obj, name, value)


# command -> (C++ job type, the job's own fields, the nested settings field or None)
_JOBS = {
    "keys": ("KeysJob", ("output_rate", "lengths_in_file_unit", "chart_sheet"), "keys"),
    "cartoon": ("CartoonJob", ("sigma_frames",), "cartoon"),
    "retime": ("RetimeJob", ("like", "roles"), "retime"),
    "convert": ("ConvertJob", ("output_rate",), None),
    "gait-apply": ("GaitApplyJob", ("roles",), "apply"),
    "gait-style": ("GaitStyleJob", (), "style"),
}
_SYNTH = ("seconds", "frame_rate", "stride", "speed", "loop", "in_place", "transition_cycles")


def _gait_style_job(job, settings):
    """Fills a GaitStyleJob's adverbs, later gaits, target and synthesis from the settings it pops
    (gait files read here, as the CLI reads them); what is left (cycle, fourier) is for job.style."""
    job.adverbs = [_koma.gait.read_weighted_adverb(_os.fspath(a)) for a in settings.pop("adverbs", [])]
    style = job.style
    style.then = [_koma.gait.read_gait_segment(_os.fspath(t)) for t in settings.pop("then", [])]
    skeleton = settings.pop("skeleton", None)
    if skeleton:
        _koma.gait.set_target(style, _koma.io.read_motion(_os.fspath(skeleton)).motion)
    _set_fields(style.synth, {k: settings.pop(k) for k in _SYNTH if k in settings}, "gait-style")
    job.style = style
    csv = settings.pop("csv", False)
    if not isinstance(csv, bool):
        raise TypeError(f"gait-style: csv={csv!r}: in a batch csv=True writes each output's angles beside it "
                        "(out/walk.bvh -> out/walk.csv); one path cannot serve every file")
    job.csv_beside_output = csv


def make_job(command, settings):
    """The C++ job (_batch.KeysJob / CartoonJob / RetimeJob / ConvertJob) for a command and a plain
    settings dict."""
    if command == "render":
        from . import _render_job
        job = _render_job(**settings)  # koma.render_file's settings
        job.validate()
        return job
    if command not in _JOBS:
        raise ValueError(f"command: unknown command '{command}' (expected {', '.join(COMMANDS)})")
    settings = dict(settings)
    read = {k: settings.pop(k) for k in ("unit", "animation") if k in settings}
    if "unit" in read and isinstance(read["unit"], (str, int, float)) and not isinstance(read["unit"], bool):
        # The library's one unit parser: a name, or (retime, convert, keys) metres per file unit.
        parsed = _koma.parse_file_unit(read["unit"] if isinstance(read["unit"], str) else repr(float(read["unit"])))
        read["unit"] = parsed.unit
        if parsed.scale > 0:
            read["scale"] = parsed.scale
    type_name, own, inner_name = _JOBS[command]
    job = getattr(_cpp, type_name)()
    if command == "cartoon" and read.get("unit") is not None:
        job.points_unit = read["unit"]
    if command == "keys" and "spacing" in settings:
        from . import spacing_settings
        spacing = settings.pop("spacing")
        job.spacing = spacing if isinstance(spacing, _koma.keys.SpacingSettings) else spacing_settings(**spacing)
    if command == "gait-style":
        _gait_style_job(job, settings)
    if command == "gait-apply":
        job.adverbs = [_koma.gait.read_weighted_adverb(_os.fspath(a)) for a in settings.pop("adverbs", [])]
    if command == "convert":
        if isinstance(settings.get("range"), str):
            job.range = _cpp.parse_frame_range(settings.pop("range"))
        if "out_unit" in settings:
            job.write.unit = _koma.length_unit_named(str(settings.pop("out_unit")), "out_unit")
    _set_fields(job, {k: settings.pop(k) for k in own if k in settings}, command)
    _set_fields(job.read, read, "read")
    if inner_name is None:
        if settings:
            raise TypeError(f"{command}: unknown setting '{next(iter(settings))}'")
    else:
        inner = getattr(job, inner_name)
        _set_fields(inner, settings, command)
        setattr(job, inner_name, inner)
    job.validate()
    return job


def _item_runner(command):
    return getattr(_cpp, f"run_{command.replace('-', '_')}_item")


def run_file(command, input, relative, output, settings, resume=False):
    """One file through `command` (what each Dask task runs): builds the job from `settings` on the
    worker and returns the file's report entry (a dict). Failures are in the entry, never raised."""
    job = make_job(command, settings)
    return _item_runner(command)(input, relative, output, job, resume)


def run_files(command, files, settings, resume=False):
    """Several files through `command` in one Dask task: [(input, relative, output), ...] -> their
    report entries, in order. The job is built once; each file fails or succeeds on its own."""
    job = make_job(command, settings)
    item = _item_runner(command)
    return [item(i, r, o, job, resume) for i, r, o in files]


def _chunks(items, workers):
    """The items dealt into about four tasks per worker (a task costs Dask a scheduling round trip,
    which is of the order of a short clip's work), interleaved so that each task gets a mix of the
    tree; with their positions, to put the entries back in the items' order."""
    count = max(1, min(len(items), 4 * max(1, workers)))
    return [(list(range(c, len(items), count)), items[c::count]) for c in range(count)]


def _table(files):
    try:
        import pandas
    except ImportError:
        return files
    frame = pandas.DataFrame.from_records(files)
    frame.attrs["report"] = _last_report
    return frame


def last_report():
    """The whole summary report of the last ``run`` in this process (a dict), or None."""
    return _last_report


def plan_settings(command, job, to=None):
    """How `command`'s outputs are named (_batch.PlanSettings): ``to`` is the output format ("glb",
    "fbx", ...; for render "mp4" (default), "gif" or "png", a folder of PNG frames); None = the
    command's default (motion files keep the input's format, FBX writes glb)."""
    ext = "" if to is None else "." + str(to).lstrip(".")
    if command == "render":
        return _cpp.render_plan(job, ext)
    plan = _cpp.PlanSettings(output_extension=ext)
    if command == "gait-style":
        plan.extensions = _cpp.gait_style_extensions()  # folders yield .gait.json gait files too
    return plan


def run(command, inputs, output_dir, client=None, jobs=0, resume=False, report=None, to=None, **settings):
    """Runs `command` ("keys", "cartoon", "retime", "convert", "gait-apply", "gait-style" or "render") on every input
    file and returns the summary records.

    ``inputs``: a path or a list of files, folders (searched recursively for .bvh, .gltf, .glb, .fbx; an .fbx writes .glb)
    and glob patterns; outputs mirror the tree under ``output_dir``. ``client``: a
    ``dask.distributed.Client`` to map the files over its cluster, or None for the local pool
    (``jobs`` threads, 0 = the cores). ``resume`` skips outputs that exist and are not older than
    their input, once the folder's record (``.koma-batch.json``) shows the same command and settings
    (else ValueError: skipping them would mix two settings). ``report``: also write the summary report (JSON) to this path. One bad file never
    stops the batch: its record has status "failed" and the error. ``to``: the output format
    (plan_settings()); for render each take becomes ``output_dir/<relative path>.mp4``, ``to="gif"``,
    or ``to="png"`` a folder of frames. Raises ValueError / TypeError
    for bad settings and OSError for inputs that do not exist, before any file runs.
    """
    global _last_report
    if isinstance(inputs, (str, _os.PathLike)):
        inputs = [inputs]
    inputs = [_os.fspath(p) for p in inputs]
    output_dir = _os.fspath(output_dir)
    # Paths as strings: the settings are recorded as JSON and sent to Dask workers.
    settings = {k: _os.fspath(v) if isinstance(v, _os.PathLike) else v for k, v in settings.items()}
    job = make_job(command, settings)  # bad settings fail here, before any file
    plan = plan_settings(command, job, to)
    items = _cpp.plan(inputs, output_dir, plan)  # inputs that do not exist fail here, before the folder is touched
    # A resumed batch must have the settings that filled the folder (else ValueError, naming them).
    _cpp.claim_output_dir(output_dir, command, settings, resume)
    start = _time.monotonic()
    if client is None:
        runner = getattr(_cpp, f"run_{command.replace('-', '_')}")
        files = runner(inputs, output_dir, job, jobs, resume, plan)
        workers = jobs
    else:
        workers = len(client.scheduler_info().get("workers", {})) or jobs
        chunks = _chunks([tuple(i) for i in items], workers)
        futures = client.map(run_files, [command] * len(chunks), [c[1] for c in chunks], [settings] * len(chunks),
                             [resume] * len(chunks),
                             key=[f"koma-{command}-{n}-{_time.time_ns()}" for n in range(len(chunks))], pure=False)
        files = [None] * len(items)
        for (positions, _), entries in zip(chunks, client.gather(futures)):
            for p, entry in zip(positions, entries):
                files[p] = entry
    _last_report = _cpp.report(command, settings, workers, resume, files, _time.monotonic() - start)
    if report is not None:
        import json
        import tempfile
        report = _os.fspath(report)
        folder = _os.path.dirname(_os.path.abspath(report))
        fd, tmp = tempfile.mkstemp(prefix=f".{_os.path.basename(report)}.", suffix=".tmp", dir=folder)
        try:
            with _os.fdopen(fd, "w") as f:
                json.dump(_last_report, f, indent=2)
                f.write("\n")
            _os.replace(tmp, report)
        except BaseException:
            _os.unlink(tmp)
            raise
    return _table(files)
