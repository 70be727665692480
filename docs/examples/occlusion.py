"""Leave-one-word-out attribution, registered with one call: every protocol that scores attributions
picks it up (docs/extending.md)."""
import numpy as np

import xaibench
from xaibench.explainers.base import Attribution, LocalExplainer


@xaibench.register_explainer("occlusion")
class Occlusion(LocalExplainer):
    """A word's relevance: how much p(class) drops when the word is deleted."""

    def explain(self, texts, targets=None):
        out = []
        for i, text in enumerate(texts):
            words = self.tokens(text)  # the model's tokens: every protocol reads one score per token
            variants = [" ".join(words)] + [" ".join(words[:j] + words[j + 1:]) for j in range(len(words))]
            p = self.model.predict_proba(variants)
            target = int(p[0].argmax()) if targets is None else int(targets[i])
            out.append(Attribution(text, words, p[0, target] - p[1:, target], target))
        return out
