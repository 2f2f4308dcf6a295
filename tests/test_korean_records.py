"""Records written in Korean: they validate, round-trip exactly, render, and their repeats are found.

Korean attaches particles to the noun (체크포인트가, 체크포인트를, 체크포인트에서), so the repeat
suggestions compare syllable bigrams of Hangul words (tooling/catalogue/hangul.py); a title
typed decomposed (NFD, as macOS file names give it) is compared composed and stored as typed.
"""
from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
import yaml

from support import snapshot, tooling
from tooling.catalogue.engine import ENGINE, Matcher
from tooling.catalogue.hangul import hangul_terms
from tooling.catalogue.modes import FLAGS, catalogue
from tooling.catalogue.recognise import suggest
from tooling.intake.dates import DateRules
from tooling.intake.values import Context, convert, key

# The first report: NFS inode exhaustion during a checkpoint save, written up in Korean.
FIRST = "체크포인트 저장 중 /nfs/ckpt 볼륨 inode 고갈로 학습 중단"
ROOT_CAUSE = ("비동기 체크포인트가 스텝마다 랭크별 샤드 파일을 새로 만들었고 오래된 체크포인트는 지우지 않았다. "
              "/nfs/ckpt 볼륨의 inode가 바닥나서 용량이 남아 있는데도 새 파일을 만들 수 없었다.")
EVENTS = [("2026-11-10T03:20:00+09:00", "로그 확인: step 48000 체크포인트 저장이 'No space left on device'로 실패, "
                                        "모든 랭크 종료", None),
          ("2026-11-10T03:40:00+09:00", "df -h 는 61% 사용 & df -i 는 IUse% 100% -> 용량이 아니라 inode 문제", "김민수")]
# The same failure a week later, in other words: no "inode", no "NFS", another verb and particle.
SECOND = "체크포인트를 저장하다가 파일 개수 한도에 걸려 학습이 멈췄습니다"
# Two other Korean reports: one of the same symptom and layer as the first, one that shares
# "학습 중단" with it; neither is the same failure.
SAME_LAYER = "S3 버킷 업로드 대역폭 제한으로 비동기 저장이 40분 넘게 밀림"
OTHER = "데이터로더 워커가 공유 메모리 부족으로 죽어 학습 중단"

NONE_LIKE = "no earlier incident looks like this one\n"


def _new(repo: Path, title: str, symptom: str, layer: str, detected_at: str) -> str:
    result = tooling("new-incident", "--title", title, "--run", "demo-7b", "--severity", "sev2",
                     "--symptom", symptom, "--layer", layer, "--detected-at", detected_at, cwd=repo)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return result.stdout


def timeline_assignments() -> list[str]:
    """``tooling set`` arguments appending EVENTS after the timeline's first entry (detected)."""
    return [f"timeline.{n}={{at: {at}, event: {json.dumps(event, ensure_ascii=False)}"
            + (f", by: {by}}}" if by else "}") for n, (at, event, by) in enumerate(EVENTS, 1)]


def _file_first(repo: Path) -> None:
    """INC-0003: the first report, its root cause and timeline added with tooling set."""
    assert _new(repo, FIRST, "checkpoint", "storage", "2026-11-10T03:12:00+09:00") == (
        "created incidents/INC-0003.yaml\n" + NONE_LIKE)
    result = tooling("set", "INC-0003", f"root_cause={ROOT_CAUSE}", *timeline_assignments(), cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (0, "updated incidents/INC-0003.yaml\n", "")


def _record(repo: Path, incident: str) -> dict:
    return yaml.safe_load((repo / "incidents" / f"{incident}.yaml").read_text("utf-8"))


def test_a_korean_record_validates_and_keeps_every_character(repo: Path) -> None:
    _file_first(repo)
    check = tooling("validate", "--strict", cwd=repo)
    assert (check.returncode, check.stdout) == (0, "")
    text = (repo / "incidents" / "INC-0003.yaml").read_text("utf-8")
    assert f"\ntitle: {FIRST}\n" in text  # written as typed, not as \uXXXX escapes
    record = _record(repo, "INC-0003")
    assert (record["title"], record["root_cause"]) == (FIRST, ROOT_CAUSE)
    assert [(e["event"], e.get("by")) for e in record["timeline"][1:]] == [(e, by) for _, e, by in EVENTS]


def test_a_title_typed_decomposed_is_stored_as_typed(repo: Path) -> None:
    decomposed = unicodedata.normalize("NFD", FIRST)
    assert decomposed != FIRST
    _new(repo, decomposed, "checkpoint", "storage", "2026-11-10T03:12:00+09:00")
    note = unicodedata.normalize("NFD", "스토리지 팀에 inode 알림 요청")
    assert tooling("set", "INC-0003", f"notes={note}", cwd=repo).returncode == 0
    record = _record(repo, "INC-0003")
    assert (record["title"], record["notes"]) == (decomposed, note)  # never rewritten to NFC
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_second_korean_report_of_the_same_failure_is_its_likely_repeat(repo: Path, form: str) -> None:
    _file_first(repo)
    assert _new(repo, SAME_LAYER, "checkpoint", "storage", "2026-11-12T14:00:00+09:00") == (
        "created incidents/INC-0004.yaml\n" + NONE_LIKE)
    assert _new(repo, OTHER, "crash", "host", "2026-11-14T14:00:00+09:00") == (
        "created incidents/INC-0005.yaml\n" + NONE_LIKE)
    typed = unicodedata.normalize(form, SECOND)  # NFD: as a macOS file name would hand it over
    assert _new(repo, typed, "checkpoint", "storage", "2026-11-20T22:40:00+09:00") == (
        "created incidents/INC-0006.yaml\n"
        "likely repeats (confirm with: tooling set INC-0006 repeat_of=ID):\n"
        f"  INC-0003  similar wording (0.45): {FIRST}\n")
    assert _record(repo, "INC-0006")["title"] == typed
    report = json.loads(tooling("repeats", "--json", cwd=repo).stdout)
    assert report["likely_repeats"] == [{"incident": "INC-0006", "similar": "INC-0003", "score": 0.45}]
    table = tooling("repeats", cwd=repo, env={"COLUMNS": "200"}).stdout
    assert re.search(r"INC-0006 +│ INC-0003 +│ 0\.45 +│ tooling set INC-0006 repeat_of=INC-0003", table), table
    # validate's note on the unrelated one comes from its Korean wording (공유 메모리)
    assert tooling("validate", "--strict", cwd=repo).stdout == (
        "incidents/INC-0005.yaml:13:1: [failure-mode-suggestion] note: the description suggests failure mode "
        "host.shared-memory (Shared memory exhausted (/dev/shm)); if so: tooling set INC-0005 "
        "failure_mode=host.shared-memory\n")
    # confirmed, the two are one automation candidate
    assert tooling("set", "INC-0006", "repeat_of=INC-0003", cwd=repo).returncode == 0
    report = json.loads(tooling("repeats", "--json", cwd=repo).stdout)
    assert [c["incidents"] for c in report["candidates"]] == [["INC-0003", "INC-0006"]]
    assert report["likely_repeats"] == []


def test_hangul_errors_name_the_value_as_typed(repo: Path) -> None:
    _file_first(repo)
    before = snapshot(repo)
    result = tooling("new-incident", "--title", SECOND, "--run", "demo-7b", "--severity", "심각",
                     "--symptom", "checkpoint", cwd=repo)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: --severity: Expected one of: ['sev1', 'sev2', 'sev3', 'sev4', 'unknown'] "
           "but received: '심각'\n")
    result = tooling("set", "INC-0003", "severity=심각", cwd=repo)
    lines = (repo / "incidents" / "INC-0003.yaml").read_text("utf-8").splitlines()
    at = next(n for n, line in enumerate(lines, 1) if line.startswith("severity: "))  # the value, at column 11
    assert (result.returncode, result.stderr) == (
        1, f"tooling: error: incidents/INC-0003.yaml:{at}:11: [invalid-value] Expected one of: ['sev1', 'sev2', "
           "'sev3', 'sev4', 'unknown'] but received: '심각' (not changed: the edit would make the record invalid)\n")
    assert snapshot(repo) == before
    # a column after Hangul counts characters, as an editor shows them, not UTF-8 bytes
    path = repo / "incidents" / "INC-0003.yaml"
    lines = path.read_text("utf-8").splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines, 1) if line.startswith("title: "))
    lines[number - 1] = "title: 체크포인트 저장: 실패\n"
    path.write_text("".join(lines), "utf-8")
    check = tooling("validate", cwd=repo)
    assert (check.returncode, check.stdout) == (1, f"incidents/INC-0003.yaml:{number}:16: [yaml-syntax] mapping "
                                                   "values are not allowed in this context; expected valid YAML\n")


def test_the_generated_page_keeps_the_korean_text(repo: Path) -> None:
    """The markdown `tooling build` writes; the HTML of both editions is checked in
    tests/site/test_korean_records_site.py, which builds a copy of the whole site."""
    _file_first(repo)
    result = tooling("--now", "2026-11-29T12:00:00+00:00", "build", "--render-only", cwd=repo)
    assert result.returncode == 0, result.stderr
    page = (repo / "docs" / "generated" / "incidents" / "INC-0003.md").read_text("utf-8")
    assert "\n# INC\\-0003: 체크포인트 저장 중 /nfs/ckpt 볼륨 inode 고갈로 학습 중단\n" in page
    assert "| df \\-h 는 61% 사용 &amp; df \\-i 는 IUse% 100% \\-&gt; 용량이 아니라 inode 문제 | 김민수 |" in page
    assert ROOT_CAUSE.replace(".", "\\.") in page


def test_a_korean_logbook_value_maps_whatever_its_unicode_form() -> None:
    """tooling import: a cell typed decomposed matches the mapping's composed key, and the other way."""
    for theirs, cell in (("심각", unicodedata.normalize("NFD", "심각")), (unicodedata.normalize("NFD", "보통"), "보통")):
        ctx = Context({"severity": {key(theirs): "sev1"}}, {}, DateRules(), ("demo-7b",))
        assert convert("severity", cell, "영향도", ctx).value == "sev1"


# --- the tokeniser and the failure-mode keywords -------------------------------------------------

def test_a_particle_does_not_hide_the_noun() -> None:
    terms = [hangul_terms(f"체크포인트{particle} 저장") for particle in ("가", "를", "에서", "에서는", "")]
    assert terms == [["체크", "크포", "포인", "인트", "저장"]] * 5
    assert hangul_terms(unicodedata.normalize("NFD", SECOND)) == hangul_terms(SECOND) == [
        "체크", "크포", "포인", "인트", "저장", "파일", "개수", "한도", "걸려", "학습", "멈췄"]
    assert hangul_terms("NCCL WARN Timeout at work 12 on node017") == []
    assert hangul_terms("용량은 남아 있었지만 만들 수 없었다") == ["용량", "남아", "만들"]  # no 있었/없었


# How Korean teams write up the common modes without their English term.
KOREAN_PARAPHRASES = [
    ("storage.disk-full", "/data 볼륨 용량 부족으로 로그를 못 씀"),
    ("storage.disk-full", "체크포인트 디렉터리 디스크가 꽉 참"),
    ("storage.inode-exhaustion", "공유 스토리지 아이노드 고갈"),
    ("storage.inode-exhaustion", "NFS inode 고갈로 새 파일 생성 불가"),
    ("storage.quota", "프로젝트 쿼터 초과로 체크포인트 쓰기가 막힘"),
    ("scheduler.preemption", "우선순위 높은 예약 때문에 잡이 프리엠션됨"),
    ("scheduler.preemption", "SLURM 선점으로 학습이 중단"),
    ("scheduler.time-limit", "잡 시간 제한에 걸려 종료"),
    ("nccl.collective-timeout", "NCCL 타임아웃으로 전체 랭크가 멈춤"),
    ("nccl.collective-timeout", "all-reduce 에서 모든 랭크가 멈췄다"),
    ("node.unresponsive", "노드 두 대가 갑자기 다운"),
    ("checkpoint.partial-write", "재시작할 때 깨진 체크포인트를 읽음"),
    ("checkpoint.partial-write", "체크포인트 파일이 손상되어 resume 실패"),
    ("checkpoint.save-failed", "체크포인트 저장 실패"),
    ("training.divergence", "loss 가 폭발하고 발산"),
    ("training.loss-spike-recovered", "loss 스파이크가 있었지만 200 step 만에 회복"),
    ("training.throughput-drop", "처리량이 30% 떨어짐"),
    ("cuda.oom", "배치를 키우자 GPU 메모리 부족"),
    ("host.oom-killed", "호스트 메모리 부족으로 OOM 킬러가 프로세스를 죽임"),
    ("host.shared-memory", "컨테이너 공유 메모리 64MB 기본값"),
    ("gpu.thermal", "GPU 과열로 클럭 스로틀링"),
    ("gpu.fell-off-bus", "GPU 가 PCIe 버스에서 떨어져 나감"),
    ("process.segfault", "세그폴트로 프로세스 종료"),
    ("host.kernel-panic", "노드에서 커널 패닉"),
    ("training.nan", "학습 중 loss 가 NaN 이 됨"),
    ("training.hang", "학습이 멈췄다"),
]


@pytest.mark.parametrize("form", ["NFC", "NFD"])
@pytest.mark.parametrize(("mode_id", "text"), KOREAN_PARAPHRASES,
                         ids=[f"{m}-{n}" for n, (m, _) in enumerate(KOREAN_PARAPHRASES)])
def test_a_korean_paraphrase_suggests_its_mode_first(mode_id: str, text: str, form: str) -> None:
    suggested = [m.id for m in suggest(unicodedata.normalize(form, text))]
    assert suggested[:1] == [mode_id], suggested


def test_the_korean_keywords_match_alike_in_both_engines() -> None:
    """Keywords are matched on UTF-8 bytes (Hyperscan, or re over bytes where it is missing), so
    `.{0,N}` spans N bytes in both; compared here against re over the same bytes."""
    patterns = [p for mode in catalogue().modes for p in mode.keywords]
    matcher = Matcher(patterns, first_only=True)
    plain = [re.compile(p.encode(), FLAGS | re.MULTILINE) for p in patterns]
    for _, text in KOREAN_PARAPHRASES:
        assert matcher.matching(text) == [i for i, c in enumerate(plain) if c.search(text.encode())], (ENGINE, text)
