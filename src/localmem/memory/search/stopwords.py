"""Words that carry the asking, not the topic: a query made only of these matches nothing.

Two lists, checked on the word as written (lower case) before diacritics are
folded away:

- English: the common function words of the usual IR stop lists (articles,
  pronouns, auxiliaries, prepositions, conjunctions, question words), plus the
  filler of conversational questions ("what's the best way to...", "do you
  know...", "is it okay to..."), which names no topic in any store.
- Vietnamese, in its own spelling: pronouns, particles, classifiers,
  auxiliaries, prepositions and question words. They are checked with their
  tone marks because folding makes them collide with content words: `để` (so
  that) folds to `de` like `đề` (topic), `đâu` (where) to `dau` like `dấu`
  (accent mark), `cài` (install) to `cai` like the classifier `cái`, `đăng`
  (post, log in) to `dang` like `đang` (-ing). A Vietnamese word typed without
  marks is therefore kept unless its bare spelling is itself a function word.
"""

from __future__ import annotations

import unicodedata


def _listed(text: str) -> frozenset[str]:
    # NFKC: the form `tokens` compares against (tone marks kept, composed).
    return frozenset(unicodedata.normalize("NFKC", word) for word in text.split())


ENGLISH = _listed(
    """
    a about above after again against ago all almost along already also although
    always am among an and another any anybody anyone anything anyway anywhere are
    around as ask asked asking at away be became because become been before being
    below best better beside besides between both but by can cannot could did didn do does
    doesn doing don done down during each either else etc even ever every everybody
    everyone everything everywhere few for from further get gets getting go goes going
    gone got gotten had hadn has hasn have haven having he her here hers herself him
    himself his how however i if in into is isn it its itself just kind know knows
    known let lets like likely lot lots many may maybe me might mine more most mostly much
    must my myself need needed needs no nobody none nor not nothing now of off often oh ok
    okay on once one ones only onto or other others otherwise ought our ours ourselves out over own
    perhaps please probably quite rather re really said same say says shall she
    should shouldn since so some somebody someone something sometimes somewhat
    somewhere soon sort still such sure tell than thank thanks that thats the their
    theirs them themselves then there these they thing things think this those though
    through thus to too toward towards under unless until up upon us use used using
    usually very via want wanted wants was wasn way ways we well were weren what
    whats whatever when whenever where whereas wherever whether which while who whoever
    whom whose why will with within without won would wouldn yeah yes yet you your
    yours yourself yourselves
    """
)

VIETNAMESE = _listed(
    """
    à ạ ai anh ấy bà bao bạn bằng bấy biết bị bởi các cách cái cần cả chỉ chiếc chị
    cho chứ chúng chưa có còn của cũng dưới đã đang đâu để đến đều đi điều đó đây đấy
    được em gì giữa hay hả hoặc họ hơn khi không là lại lắm làm lên luôn lúc mà mấy
    mình một mỗi mọi muốn nào này nên nếu ngoài nhất nhé nhỉ nhiêu nhiều như nhưng
    những nó nói ơi ông ở phải qua quá ra rằng rất rồi sao sau sẽ ta tại thật theo
    thế thể thì thôi thường tôi tới trên trong trước từ từng và vào vẫn vậy về vì với
    vừa ư
    """
)
