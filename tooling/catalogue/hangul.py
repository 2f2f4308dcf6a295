"""Korean text compared as text: NFC, and the syllable bigrams of each Hangul word.

Korean writes particles and endings onto the word they follow (체크포인트가, 체크포인트를,
체크포인트에서; 저장했다, 저장하다가), so two Korean descriptions of one failure rarely share a
whole word. Each run of Hangul syllables is cut into overlapping two-syllable pieces instead,
after one common particle or ending is taken off its end: 체크포인트에서 and 체크포인트가 both give
체크 크포 포인 인트. A piece of a particle left on would be shared by every Korean record (니다,
했다) and make unrelated ones look alike; a single syllable left alone (중, 후, 및) says nothing.

Text is compared in NFC: a title typed where the syllables arrive decomposed into jamo (NFD,
as macOS file names and some of its input methods give them) reads the same as one typed
elsewhere. Only the comparison is normalised; the record keeps what the person wrote.
"""
from __future__ import annotations

import re
import unicodedata

_RUN = re.compile(r"[\uac00-\ud7a3]+")  # precomposed Hangul syllables (after NFC)

# Endings of verbs and adjectives, then particles, as they end a word in an incident write-up.
_ENDINGS = frozenset("""
    하였습니다 되었습니다 했습니다 됐습니다 였습니다 었습니다 았습니다 습니다 입니다 합니다 됩니다
    하였다 되었다 했다 됐다 였다 었다 았다 한다 된다 이다 이었다 했음 됐음 되었음 하였음 있음 없음
    하다가 다가 하면서 면서 하는데 했는데 됐는데 하지만 했지만 했으나 됐으나 하며 했으며 됐으며
    하여 해서 하고 했고 됐고 었고 았고 였고 이었고 되어 되고 되는 되던 하는 하던 하지 되지 하면 되면
    하게 했던 됐던 하기 되기 해야 이라서 라서
    에서는 에서도 에서의 으로는 으로도 으로서 으로써 에게서 까지는 부터는 이라는 이라고 라는 라고
    에서 으로 에게 한테 까지 부터 처럼 보다 마다 이나 이랑 와는 과는 에는 에도 에만 이며 이고
    은 는 이 가 을 를 의 에 도 만 로 와 과 나 며 서 별 들 한 된 할 될 던 함 됨 음
""".split())
_LONGEST = max(map(len, _ENDINGS))

# Words that carry no subject in a write-up, whatever their particle.
_STOP = frozenset("""
    그리고 하지만 그래서 그러나 또는 이후 이전 직후 직전 때문 통해 위해 대해 대한 관련 경우 정도 이번
    해당 모든 다시 계속 이미 아직 바로 당시 확인 발생 진행 상황 문제 현상 결과 원인 조치 작업
""".split())
# Negation and existence (않았다, 못했다, 있었다, 없는): grammar around the words that matter.
_AUXILIARY = ("않", "못", "있", "없")


def nfc(text: str) -> str:
    """``text`` as it is compared: composed (NFC), whatever the keyboard that typed it."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def stem(word: str) -> str:
    """A Hangul word without its one ending or particle (the longest that fits), when at least
    two syllables are left: 체크포인트에서 -> 체크포인트, but 한도 stays 한도."""
    for size in range(min(_LONGEST, len(word) - 2), 0, -1):
        if word[-size:] in _ENDINGS:
            return word[:-size]
    return word


def hangul_terms(text: str) -> list[str]:
    """The syllable bigrams of every Hangul word of ``text`` (none for text without Hangul)."""
    if text.isascii():
        return []
    terms: list[str] = []
    for run in _RUN.findall(nfc(text)):
        word = stem(run)
        if len(word) >= 2 and word not in _STOP and not word.startswith(_AUXILIARY):
            terms.extend(word[i:i + 2] for i in range(len(word) - 1))
    return terms
