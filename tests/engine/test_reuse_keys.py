"""The keys of reusable work (steepy.model.cachekeys, with the engine's file fingerprints):
what changes a chain's key and what does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from steepy.engine import fingerprints as fingerprints_module
from steepy.engine import reuse as reuse_module
from steepy.engine.fingerprints import Fingerprints
from steepy.model.cachekeys import CACHE_DEEP, KeyMemo, chain_keys
from steepy.model.processchain import Argument, ArgumentVariable, Executable, ProcessChain
from steepy.model.service import Service


def _service(**changes) -> Service:
    data = {"id": "cp", "name": "Copy", "description": "copies", "path": "cp",
            "runtime": "other", "parameters": []}
    data.update(changes)
    return Service.from_json(data)


def _chain(source: str, target: str, second_target: str | None = None,
           chain_id: str = "c1") -> ProcessChain:
    def exe(exe_id: str, src: str, dst: str) -> Executable:
        return Executable(exe_id, "cp", "cp", [
            Argument("in", ArgumentVariable("v_in_" + exe_id, src), "input"),
            Argument("out", ArgumentVariable("v_out_" + exe_id, dst), "output")])
    executables = [exe("e1", source, target)]
    if second_target is not None:  # reads what the first one writes
        executables.append(exe("e2", target, second_target))
    return ProcessChain(chain_id, executables)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("hello\n")
    return path


def _key(chain: ProcessChain, service: Service | None = None, deep: bool = False) -> str:
    keys = chain_keys(chain, {"cp": service or _service()}, Fingerprints(),
                      CACHE_DEEP if deep else "standard")
    assert keys is not None
    return keys.chain


def test_only_the_output_paths_differing_keeps_the_key(source: Path) -> None:
    first = _key(_chain(str(source), "/tmp/S1/a", "/tmp/S1/b"))
    # another submission: other output paths, the second executable reads the new one
    assert _key(_chain(str(source), "/tmp/S2/x", "/tmp/S2/y", chain_id="c2")) == first


def test_a_touched_or_changed_input_changes_the_key(source: Path) -> None:
    before = _key(_chain(str(source), "/o/a"))
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    touched = _key(_chain(str(source), "/o/a"))
    assert touched != before
    source.write_text("hello, world\n")
    assert _key(_chain(str(source), "/o/a")) not in (before, touched)


def test_deep_mode_compares_content_not_time(source: Path) -> None:
    before = _key(_chain(str(source), "/o/a"), deep=True)
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _key(_chain(str(source), "/o/a"), deep=True) == before
    source.write_text("other\n")
    assert _key(_chain(str(source), "/o/a"), deep=True) != before


def _folder_chain(folder: Path, data_type: str) -> ProcessChain:
    return ProcessChain("c", [Executable("e", "cp", "cp", [
        Argument("in", ArgumentVariable("v", str(folder)), "input", None, data_type),
        Argument("out", ArgumentVariable("o", "/o/a"), "output")])])


def test_a_directory_input_is_compared_by_its_files(tmp_path: Path, monkeypatch) -> None:
    """Files and folders below a folder input count, whatever its data type (a tool given `.'
    as text may read it), also below a link to a folder (a link to a folder above is followed
    once), as one digest; a folder of more files than can be compared (`/' as text), or with
    a folder below that cannot be listed, makes the chain one that is never reused, and a
    FIFO in it is not opened in deep mode."""
    from steepy.engine import fingerprints

    folder, elsewhere = tmp_path / "d", tmp_path / "elsewhere"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "f").write_text("1")
    elsewhere.mkdir()
    (elsewhere / "x").write_text("x")
    (folder / "link").symlink_to(elsewhere)
    (folder / "sub" / "loop").symlink_to(folder)
    os.mkfifo(folder / "pipe")

    def keys(data_type: str = "directory", deep: bool = False):
        found = chain_keys(_folder_chain(folder, data_type), {"cp": _service()},
                           Fingerprints(), CACHE_DEEP if deep else "standard")
        assert found is not None
        return found

    before, as_text, deep = keys().chain, keys("string").chain, keys(deep=True).chain
    # f, x through the link, the FIFO; sub/, link/ and sub/loop/ (not walked again)
    assert keys().files[0][str(folder)]["files"] == 6
    (folder / "sub" / "f").write_text("22")
    assert keys().chain != before and keys("string").chain != as_text
    assert keys(deep=True).chain != deep
    before = keys().chain
    (elsewhere / "x").write_text("changed through the link")
    assert keys().chain != before
    assert keys().uncomparable is None
    before = keys().chain
    (folder / "empty").mkdir()  # a folder a tool may look into
    assert keys().chain != before
    real_scandir = os.scandir

    def scandir(path="."):  # (as root, a folder is never refused: as for another user)
        if str(path) == str(folder / "sub"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert keys().uncomparable == str(folder)  # its files would be left out
    monkeypatch.setattr(os, "scandir", real_scandir)
    monkeypatch.setattr(fingerprints, "TREE_FILES", 2)
    assert keys("string").uncomparable == str(folder)


def test_a_changed_service_or_tool_changes_the_key(source: Path, tmp_path: Path) -> None:
    chain = _chain(str(source), "/o/a")
    plain = _key(chain)
    assert _key(chain, _service(environment={"LANG": "C"})) != plain
    assert _key(chain, _service(runtime="docker")) != plain
    # the words for people are no work of the tool (review, session 49: a description
    # edited reran everything the service had done)
    assert _key(chain, _service(description="copies, better", name="Copier")) == plain
    labelled = _service(parameters=[{"id": "in", "name": "In", "description": "i",
                                     "type": "input", "cardinality": "1..1"}])
    reworded = _service(parameters=[{"id": "in", "name": "Source", "description": "the file",
                                     "type": "input", "cardinality": "1..1"}])
    assert _key(chain, labelled) == _key(chain, reworded)
    assert _key(chain, labelled) != _key(chain, _service(parameters=[{
        "id": "in", "name": "In", "description": "i", "type": "input", "cardinality": "1..1",
        "label": "-i"}]))
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\ncp \"$@\"\n")
    with_tool = _chain(str(source), "/o/a")
    with_tool.executables[0].path = str(tool)
    first = _key(with_tool, _service(path=str(tool)))
    tool.write_text("#!/bin/sh\ncp -p \"$@\"\n")  # the script changed, its declaration not
    assert _key(with_tool, _service(path=str(tool))) != first


COPY_PARAMETERS = [{"id": "in", "name": "In", "description": "i", "type": "input",
                    "cardinality": "1..1", "dataType": "file"},
                   {"id": "out", "name": "Out", "description": "o", "type": "output",
                    "cardinality": "1..1"}]


def _generated_key(source: Path, service: Service, submission: str, **output) -> str:
    """The key of the one chain the generator makes of `cp source` in a submission (its
    paths below /tmp/SUBMISSION), the output declared with `output` (store, prefix)."""
    from steepy.generator.core import ProcessChainGenerator
    from steepy.model.workflow import Workflow

    workflow = Workflow.from_json({"api": "4.7.0", "vars": [{"id": "f", "value": str(source)}],
                                   "actions": [{"type": "execute", "service": "cp",
                                                "inputs": [{"id": "in", "var": "f"}],
                                                "outputs": [{"id": "out", "var": "o",
                                                             **output}]}]})
    services = {"cp": service}
    [chain] = ProcessChainGenerator(workflow, f"/tmp/{submission}", f"/out/{submission}",
                                    services).generate({}, set(), [], [])
    keys = chain_keys(chain, services, Fingerprints())
    assert keys is not None
    return keys.chain


def test_a_service_with_runtime_arguments_keeps_its_key_from_run_to_run(source: Path) -> None:
    """The generator draws a new id for each runtime argument of every executable it makes
    (as Steep does): the key takes the argument's declared id, or a service with
    `runtimeArgs` (a Docker volume, say) would never be reused. Its value still counts."""
    def key(submission: str, value: str = "-v /data:/data") -> str:
        return _generated_key(source, _service(
            runtimeArgs=[{"id": "volume", "name": "Volume", "description": "a mount",
                          "value": value}], parameters=COPY_PARAMETERS), submission)

    assert key("S1") == key("S2")
    assert key("S3", value="-v /other:/data") != key("S1")


def test_where_an_action_puts_its_output_is_part_of_the_key(source: Path) -> None:
    """An output stored (`store: true`) or written below a `prefix` of its own is not the work
    of one left in the submission's tmpPath: reusing it would leave a stored result in an
    earlier submission's tmp folder (missing from the results, collected with it), or below
    another prefix. The default place keeps the key it always had."""
    service = _service(parameters=COPY_PARAMETERS)

    def key(submission: str, **output) -> str:
        return _generated_key(source, service, submission, **output)

    plain = key("S1")
    assert key("S2") == plain == key("S3", store=False)
    places = [key("S5", store=True), key("S6", prefix="/data/A/"), key("S7", prefix="/data/B/"),
              key("S8", prefix="rel/"), key("S9", prefix="rel/", store=True)]
    assert len({plain, *places}) == 6
    assert key("S10", store=True) == places[0] and key("S11", prefix="/data/A/") == places[1]


def test_what_keys_share_is_made_once_and_never_serves_another_executable(
        source: Path, tmp_path: Path) -> None:
    """A memo of what executables share (`KeyMemo`) gives each the key it has without one,
    whatever came before: executables of one service and tool that differ in their
    environment, modules, runtime arguments or the tool's content get their own keys."""
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\ncp \"$@\"\n")

    def variant(**changes) -> ProcessChain:
        chain = _chain(str(source), "/o/a")
        exe = chain.executables[0]
        exe.path = str(tool)
        for name, value in changes.items():
            setattr(exe, name, value)
        return chain

    variants = [variant(), variant(environment={"LANG": "C"}), variant(modules=["gcc"]),
                variant(pass_environment=["HOME"]), variant(runtime="docker"),
                variant(runtime_args=[Argument("drawn1", ArgumentVariable("v", "-x"), "input")]),
                variant(runtime_args=[Argument("drawn2", ArgumentVariable("v", "-y"), "input")]),
                variant()]
    services = {"cp": _service(path=str(tool))}
    memo = KeyMemo()
    shared = [chain_keys(c, services, Fingerprints(), memo=memo) for c in variants]
    alone = [chain_keys(c, services, Fingerprints()) for c in variants]
    assert shared == alone
    assert len({k.chain for k in shared if k}) == len(variants) - 1  # the last is the first
    tool.write_text("#!/bin/sh\ncp -p \"$@\"\n")  # the tool's content, not its declaration
    assert chain_keys(variant(), services, Fingerprints(), memo=memo) != shared[0]


def test_a_literal_argument_is_compared_as_it_is(source: Path) -> None:
    chain = _chain(str(source), "/o/a")
    before = _key(chain)
    chain.executables[0].arguments.append(
        Argument("mode", ArgumentVariable("v", "fast"), "input"))
    assert _key(chain) != before


def test_cache_false_takes_no_key(source: Path) -> None:
    assert chain_keys(_chain(str(source), "/o/a"), {"cp": _service(cache=False)},
                      Fingerprints()) is None


def test_reported_values_of_one_variable_count_in_any_order(tmp_path: Path) -> None:
    """A for-each's output lists its items in the order their iterations ended: a join over
    it keeps its key however they arrived. Values the workflow gives keep their order
    (`cat b a` is not `cat a b`), and values of different variables do, too."""
    files = []
    for name in ("a", "b"):
        files.append(tmp_path / name)
        files[-1].write_text(name)

    def join(first: str, second: str, var_of_second: str = "copies",
             reported: bool = True) -> str:
        chain = ProcessChain("c", [Executable("e", "cp", "cp", [
            Argument("in", ArgumentVariable("copies", first), "input", reported=reported),
            Argument("in", ArgumentVariable(var_of_second, second), "input",
                     reported=reported),
            Argument("out", ArgumentVariable("o", str(tmp_path / "out")), "output")])])
        keys = chain_keys(chain, {"cp": _service()}, Fingerprints())
        assert keys is not None
        return keys.chain

    a, b = (str(f) for f in files)
    assert join(a, b) == join(b, a)
    assert join(a, b, "other") != join(b, a, "other")
    assert join(a, b, reported=False) != join(b, a, reported=False)


def test_a_look_serves_while_it_is_fresh(tmp_path: Path, monkeypatch) -> None:
    """A file is stat'ed once while its look is younger than `fresh_s` (10,000 executables of
    one tool; a join over the outputs the round before checked), whatever rounds began
    meanwhile; a look that old is made again, also for another submission's round (a file
    changed meanwhile is seen changed)."""
    clock = [100.0]
    monkeypatch.setattr(fingerprints_module.time, "monotonic", lambda: clock[0])
    path = tmp_path / "f"
    path.write_text("1")
    fingerprints = Fingerprints(1.0)
    fingerprints.anew()
    before = fingerprints(str(path), False)
    path.write_text("12")
    clock[0] += 0.9
    fingerprints.anew()  # a round beginning within the second: the look still serves
    assert fingerprints(str(path), False) == before
    clock[0] += 0.2  # a second after the look began, in the same round
    assert fingerprints(str(path), False) == [2, path.stat().st_mtime_ns]


def test_outputs_just_written_are_looked_at_again(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("1")
    fingerprints = Fingerprints(60.0)
    fingerprints.anew()
    fingerprints(str(path), False)
    path.write_text("123")
    assert fingerprints.anew_for(str(path), False)[0] == 3
    assert fingerprints(str(path), False)[0] == 3
    deep = fingerprints(str(path), True)
    path.write_text("1234")
    fingerprints.anew_for(str(path), False)
    assert fingerprints(str(path), True) != deep  # (what deep mode saw is let go too)




def test_new_content_with_the_old_size_and_time_is_hashed_again(tmp_path: Path) -> None:
    """`cp -p`, `rsync -t` and `touch -r` give new content the old size and modification
    time: deep mode still sees it (the change time moves)."""
    path = tmp_path / "f"
    path.write_text("aaaa")
    fingerprints = Fingerprints(0.0)
    before = fingerprints(str(path), True)
    stat = path.stat()
    path.write_text("bbbb")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as `touch -r` does
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert fingerprints(str(path), True) != before


def test_content_hashes_kept_are_bounded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fingerprints_module, "HASHES_KEPT", 4)
    fingerprints = Fingerprints(0.0)
    for i in range(9):
        (tmp_path / str(i)).write_text(str(i))
        fingerprints(str(tmp_path / str(i)), True)
    assert len(fingerprints._hashes) <= 4


def test_a_submission_sees_no_look_another_made(tmp_path: Path, monkeypatch) -> None:
    """A file edited and then submitted at once: the new submission's keys see it edited,
    however recently another submission's round looked at it; a submission's own looks
    serve its next round; content hashes are shared; the looks of submissions without a
    round for `fresh_s' are let go."""
    from steepy.engine.reuse import Reuse

    clock = [100.0]
    monkeypatch.setattr(fingerprints_module.time, "monotonic", lambda: clock[0])
    path = tmp_path / "input"
    path.write_text("1")
    reuse = Reuse(None, {})
    first = reuse.scoped("A").fingerprint
    first.anew()
    seen_by_a = first(str(path), False)
    path.write_text("22")
    clock[0] += 0.1
    assert reuse.scoped("B").fingerprint(str(path), False) != seen_by_a  # B looks itself
    assert reuse.scoped("A").fingerprint(str(path), False) == seen_by_a  # A's still serves
    assert reuse.scoped("A").fingerprint is first
    assert reuse.scoped("B").fingerprint._hashes is first._hashes is reuse.fingerprint._hashes
    clock[0] += 5
    reuse.scoped("C")
    assert sorted(reuse._looks) == ["C"]


def test_inputs_are_looked_at_anew_when_their_chain_has_run(tmp_path: Path) -> None:
    """What a chain read is compared with what its key saw by a new look, not one that is
    still fresh: an edit between the key and the run (a moment later) is not missed."""
    from steepy.engine.reuse import Reuse

    source = tmp_path / "in.txt"
    source.write_text("before\n")
    reuse = Reuse(cache=None, services={})  # type: ignore[arg-type] (no records needed)
    seen = reuse.fingerprint(str(source), False)
    assert reuse._inputs_kept([{str(source): seen}])
    source.write_text("after, longer\n")  # within the look's second
    assert reuse.fingerprint(str(source), False) == seen  # (the fresh look still serves)
    assert not reuse._inputs_kept([{str(source): seen}])


def test_an_output_folder_too_large_to_compare_is_never_taken_as_unchanged(
        tmp_path: Path, monkeypatch) -> None:
    """An output folder of more files than are compared cannot be recorded (its
    fingerprint would say nothing of its content), and one recorded before is changed."""
    from steepy.engine.reuse import Reuse
    from steepy.registry.cache import Entry

    monkeypatch.setattr(fingerprints_module, "TREE_FILES", 2)
    folder = tmp_path / "out"
    folder.mkdir()
    for name in "abc":
        (folder / name).write_text(name)
    entry = Entry("s", "c", "e", 0, [{"path": str(folder), "results": [],
                                       "fingerprint": "uncomparable"}])
    unchanged = Reuse(cache=None, services={})  # type: ignore[arg-type] (no records needed)
    assert unchanged.changed_outputs([entry]) == [str(folder)]

    class Records:  # the chain's entries wait for their outputs
        forgotten: list[str] = []

        def pending(self, chain_ids, with_fallbacks=()):
            return {chain_id: [{}] for chain_id in chain_ids}

        def forget(self, chain_ids):
            self.forgotten.extend(chain_ids)

    from steepy.model.submission import ProcessChainStatus
    from steepy.registry.records import ChainRecord

    chain = ProcessChain("c", [Executable("e", "tool", "svc", [
        Argument("o", ArgumentVariable("v", str(folder)), "output", None, "directory")])])
    records = Records()
    done = ChainRecord(chain, "s", ProcessChainStatus.SUCCESS, {"v": []}, None, 0)
    assert Reuse(records, {})._completed([done]) == []  # type: ignore[arg-type]
    assert records.forgotten == ["c"]


def test_a_link_counts_by_the_file_it_names(tmp_path: Path) -> None:
    """An input that is a link, pointed at another file of the same size and time (a
    `latest' link, trees unpacked with their times), is other work in standard mode; in deep
    mode their content decides."""
    first, second, link = tmp_path / "t3.txt", tmp_path / "t5.txt", tmp_path / "link.txt"
    first.write_text("thr\n")
    second.write_text("xyz\n")
    os.utime(second, ns=(first.stat().st_atime_ns, first.stat().st_mtime_ns))
    link.symlink_to(first)
    before, deep = _key(_chain(str(link), "/o/a")), _key(_chain(str(link), "/o/a"), deep=True)
    link.unlink()
    link.symlink_to(second)
    assert _key(_chain(str(link), "/o/a")) != before
    assert _key(_chain(str(link), "/o/a"), deep=True) != deep  # (its content differs)
    second.write_text("thr\n")
    assert _key(_chain(str(link), "/o/a"), deep=True) == deep


def test_a_link_to_a_folder_counts_by_the_folder_it_names(tmp_path: Path) -> None:
    """A folder input that is a link (`data -> v1'), or a link to a folder inside one, pointed
    at another folder of the same files with the same sizes and times, is other work."""
    one, two = tmp_path / "v1", tmp_path / "v2"
    for folder, text in ((one, "aaa\n"), (two, "bbb\n")):
        folder.mkdir()
        (folder / "f").write_text(text)
    os.utime(two / "f", ns=(one.stat().st_atime_ns, (one / "f").stat().st_mtime_ns))
    data, outer = tmp_path / "data", tmp_path / "outer"
    data.symlink_to(one)
    outer.mkdir()
    (outer / "inner").symlink_to(one)

    def key(folder: Path) -> str:
        found = chain_keys(_folder_chain(folder, "directory"), {"cp": _service()},
                           Fingerprints(), "standard")
        assert found is not None
        return found.chain

    before, inner = key(data), key(outer)
    for link in (data, outer / "inner"):
        link.unlink()
        link.symlink_to(two)
    assert key(data) != before
    assert key(outer) != inner
    # (a folder that is no link is looked at as before: the keys it had stay)
    assert set(Fingerprints()(str(one), False)) == {"files", "tree"}
