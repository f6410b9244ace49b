"""The answer of selection mode in words (issue #29 item 1): one short paragraph a biologist can
read, from a summary (:func:`ssfs.experiment.stable_selection.consensus_result`). The same text
is in summary.json (``verdict``), printed by ``ssfs select``, stored by ``ssfs.tl.select_stable``
and shown in the report.

Stability words follow the bands that Nogueira, Sechidis & Brown (2018, Sec. 6) take from
Fleiss for kappa-like measures: below 0.4 poor, 0.4 to 0.75 fair to good ("moderate"), above
0.75 excellent ("good"). The list's stability is Nogueira's estimator over the resamples' top-n
lists, n = the length of the list (the procedure's, of the top-q lists, when nothing is selected).
An error bound is *vacuous* when it allows as many false selections as the list holds.
"""

from __future__ import annotations

from .selection import resamples_sat_out, rotation_window
from .selection_defaults import PARTIAL_MIN_SAMPLES, SHARED_MIN_WEIGHT

#: (lowest value, word) of the stability bands, best first
STABILITY_BANDS = ((0.75, "good"), (0.4, "moderate"), (float("-inf"), "poor"))

ASSUMPTION_WORDS = {"r_concave": "if the selection probabilities are r-concave",
                    "unimodal": "if the selection probabilities are unimodal",
                    "none": "with no assumption"}


def stability_word(value: float | None) -> str:
    """``good``, ``moderate`` or ``poor`` (:data:`STABILITY_BANDS`); ``undefined`` for None."""
    if value is None:
        return "undefined"
    value = round(value, 2)  # the band of the number shown
    return next(word for low, word in STABILITY_BANDS if value >= low)


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def list_stability(s: dict) -> float | None:
    """The stability the verdict speaks of: of the list (top-n lists), else of the top-q lists."""
    ls = s.get("list_stability")
    return (ls or {}).get("value") if ls else s["stability"]["value"]


def false_words(bound: float, n: int) -> str:
    """How many of ``n`` selections may be false, in words, from the bound on their expected number."""
    if bound < 0.5:
        return "probably none of them is a false selection"
    k = max(1, round(bound))
    return f"about {k} {'of them ' if n > 1 else ''}may be {'a false selection' if k == 1 else 'false selections'}"


def _bound_sentence(s: dict) -> str:
    eb, n = s["error_bound"], s["n_selected"]
    bound, held = eb.get("bound"), eb.get("bound_assumption")
    if bound is None:
        return "no error bound applies (" + eb["statement"] + ")."
    how = f"Shah & Samworth's error bound: at most {bound:.2g} expected, {ASSUMPTION_WORDS[held]}"
    if n and bound >= n:
        return (f"The error bound is vacuous: it allows {bound:.3g} false selections, as many as the list holds "
                f"({how}); "
                + ("lower max_false or raise the threshold for a bound that says something."
                   if s.get("top_auto") else "top: auto keeps it at max_false (default 1)."))
    return f"{false_words(bound, n)} ({how})."


def _left_out_sentence(s: dict) -> str:
    out = s.get("left_out") or {}
    if not out:
        return ""
    parts = [f"{m} ({why})" for m, why in out.items()]
    return f"Left out of the consensus because they could not run on every resample: {'; '.join(parts)}."


def _poor_hint(s: dict) -> str:
    """What to try when the list is not stable: labels, the methods that agree, the threshold."""
    tries = []
    counts = list((s.get("labeled_per_class") or {}).values())
    if counts and min(counts) < 20:
        tries.append(f"more labeled samples (now {min(counts)} in the smallest class)")
    own = {m: v["value"] for m, v in (s.get("method_stability") or {}).items() if v.get("value") is not None}
    if len(own) > 1:
        tries.append("the methods whose own lists reproduce (each method's stability: "
                     + ", ".join(f"{m} {v:.2f}" for m, v in own.items()) + ")")
    tries.append("a lower threshold, or a larger max_false (a longer list with a larger error bound)")
    return "; ".join(tries)


def verdict(s: dict) -> str:
    """The paragraph: what was selected, how many may be false, how stable, what to try."""
    n, stab = s["n_selected"], list_stability(s)
    word = stability_word(stab)
    stab_text = "undefined" if stab is None else f"{stab:.2f}"
    left = _left_out_sentence(s)
    if n == 0:
        note = s.get("note") or f"no feature reached selection frequency {s['threshold']:g}"
        if _no_list_possible(s):  # the note's frequencies would be the label-free rankings'
            note = "no feature selected"
        return " ".join(t for t in (note[0].upper() + note[1:] + ".", left, _label_free_sentence(s),
                                    _labels_in_resamples_sentence(s), _one_label_sentence(s),
                                    _labels_lead_sentence(s), _unwanted_sentence(s), _free_leads_sentence(s),
                                    _clipped_sentence(s)) if t)
    head = f"{_n(n, 'feature')} selected; {_bound_sentence(s)}"
    head = head.replace("; The error bound", ". The error bound")
    bound = s["error_bound"].get("bound")
    if word == "poor" and bound is not None and bound < n / 2:
        tail = (f"Stability {stab_text} (poor): other samples of this size would give partly different lists; the "
                "features listed are probably real (the bound) but others of similar strength may be missing and "
                f"the order is not reliable; for a fuller list try {_poor_hint(s)}.")
    elif word == "poor":
        tail = (f"Stability {stab_text} (poor): these data do not support a stable list of this length; "
                f"try {_poor_hint(s)}.")
    else:
        tail = f"Stability of the list {stab_text} ({word})."
    note = s.get("note")
    return " ".join(t for t in (head, tail, left, _label_free_sentence(s), _labels_in_resamples_sentence(s),
                                _batch_sentence(s), _one_label_sentence(s), _populations_sentence(s),
                                _labels_lead_sentence(s), _unwanted_sentence(s), _free_leads_sentence(s),
                                _clipped_sentence(s),
                                _outlying_sentence(s),
                                note and note[0].upper() + note[1:] + ".") if t)


def _labels_lead_sentence(s: dict) -> str:
    """The methods whose full-data fit let the labels lead (``fit``'s ``labels_lead``, ``propagate``:
    :func:`ssfs.methods._shared.labels_alone.labels_lead`): the propagated samples' groups followed
    structure that is not the classes', so they counted 0 ('' if none)."""
    led = {m: f for m, f in (s.get("fit") or {}).items() if f.get("labels_lead")}
    if not led:
        return ""
    return " ".join(
        f"The groups {m} propagated over its graph followed structure that is not the classes' (a module, a batch, "
        f"a type nobody labeled): the features the labels pick alone predicted {f.get('labels_alone_beyond', 0)} "
        f"held-out labels that the groups' features missed, and missed {f.get('labels_alone_behind', 0)} they "
        "predicted, so the propagated samples counted 0 and its order rests on the labeled samples; more labels "
        "per class make it firmer." for m, f in led.items())


def _unwanted_sentence(s: dict) -> str:
    """The methods whose full-data fit ran without rising components the held-out labels rejected (``fit``'s
    ``unwanted_components``, ``propagate``: :func:`ssfs.methods.propagate.unwanted_rejected`) and whether the
    resamples inherited that (``unwanted_inherited``, :func:`ssfs.experiment.stable_selection.inherited`)."""
    fits = {m: f for m, f in (s.get("fit") or {}).items() if f.get("unwanted_components")}
    texts = []
    for m, f in fits.items():
        c = int(f["unwanted_components"])
        them = "them" if c > 1 else "it"
        then = (f"every resample was ranked without {them} too, as after a batch correction" if
                f.get("unwanted_inherited") else "each resample's fit asked again with its own labels")
        which = "it split" if c == 1 else "one of them split"
        more = (f"more held-out labels, not significantly, but {which} the samples in two sides holding the other "
                "components' groups alike, as a batch does" if f.get("unwanted_on_lean") else
                "significantly more held-out labels")
        texts.append(f"In {m}'s ranking of all samples the held-out labels rejected the data's {c} rising component"
                     f"{'s' if c > 1 else ''} (structure the classes do not share: a batch nobody recorded, gene "
                     f"modules?): the genes' best features outside {them} predicted {more}, so it ranked the data "
                     f"without {them}, and {then} (unwanted='kept' keeps {them}).")
    return " ".join(texts)


def _free_leads_sentence(s: dict) -> str:
    """The methods whose full-data fit ranked by the label-free order below the features the labels' groups
    explain, or in turn with them where nothing judged those (``fit``'s ``label_free_leads``, ``propagate``:
    :func:`ssfs.methods.propagate.free_leads`) ('' if none)."""
    led = {m: f for m, f in (s.get("fit") or {}).items() if f.get("label_free_leads")}
    return " ".join(f"In {m}'s ranking of all samples {_why_free_leads(f)}: " + _free_order(f)
                    + " (the resamples' lists read the labels' own order)." + FREE_LEADS_ADVICE for m, f in led.items())


def _free_order(f: dict) -> str:
    """Where a fit's label-free order ranks against the features its labels' groups explain: in turn with them
    (nothing judged the groups), first (the groups' features not beyond chance), else below them."""
    if f.get("label_free_unjudged"):
        return "the features those groups explain take turns with the label-free order, which ranks the rest"
    if f.get("label_free_unproven"):
        return "its order is the label-free one, the features those groups explain among the rest"
    return "below the features those groups explain its order is the label-free one"


def _what_rose(rising, standing: str = "") -> str:
    """What a fit's data showed where its label-free order led (the verdict's tense of
    :func:`ssfs.methods.propagate._label_free_data`): components that rose above noise in a few features
    (``rising``), else none rising (``standing``: what stood out instead)."""
    return ("the components that rose above noise lay in a few features" if rising
            else f"no component of the data rose above noise{standing}")


def _why_free_leads(f: dict) -> str:
    """Why a fit's label-free order led (``label_free_unjudged``, ``label_free_at_chance``, ``label_free_head``,
    ``label_free_unproven``, ``label_free_by_places``, else the held-out predictions' sign test)."""
    if f.get("label_free_unjudged"):
        return ("too few labels could be held out to judge the groups its labels spread into (fewer than 2 labeled "
                "classes held 2 labels, or those held fewer than 5)")
    if f.get("label_free_at_chance"):
        data = _what_rose(f.get("label_free_concentrated"))
        return (f"{data}, and the features that the R^2 of the groups its labels "
                f"spread into ranks first predicted {f.get('r2_held_out', 0):.0%} of the held-out labels, no more "
                f"than chance ({f.get('r2_chance', 0):.0%})")
    if f.get("label_free_head"):
        data = _what_rose(f.get("label_free_head_of") == "signal", " and a few genes' dispersion stood out")
        return (f"{data}, and the first "
                f"{f.get('label_free_head_features', 0)} of them, chosen without labels, predicted "
                f"{f.get('label_free_head_right', 0)} of {f.get('label_free_head_held', 0)} held-out labels, beyond "
                f"chance ({f.get('label_free_head_chance', 0):.0%})" + (
                    f" and no fewer than the features that the R^2 of the groups its labels spread into ranks first "
                    f"({f.get('r2_held_out', 0):.0%})" if "label_free_outside_right" not in f else
                    f"; the features that the R^2 of the groups its labels spread into ranks first predicted "
                    f"{f.get('r2_held_out', 0):.0%}, its best features outside them only "
                    f"{f['label_free_outside_right']} of {f.get('label_free_outside_held', 0)}, not beyond chance"))
    if f.get("label_free_unproven"):
        data = _what_rose(f.get("label_free_unproven_of") == "signal",
                          f" and {f.get('label_free_unproven_standing', 0)} genes' dispersion stood out")
        return (f"{data}, and the features that the R^2 of the groups its labels spread into ranks first predicted "
                f"{f.get('r2_held_out', 0):.0%} of the held-out labels, not beyond chance "
                f"({f.get('r2_chance', 0):.0%}; one-sided binomial test at 5%), so nothing the labels found was shown "
                "to beat what stood out without them")
    if f.get("label_free_by_places"):
        return (f"the label-free features placed the own class of {f.get('label_free_nearer', 0)} held-out labels "
                f"nearer than the features of the groups its labels spread into did, and of "
                f"{f.get('label_free_farther', 0)} farther")
    return (f"the label-free features predicted {f.get('label_free_beyond', 0)} held-out labels that the features of "
            f"the groups its labels spread into missed, and missed {f.get('label_free_behind', 0)} they predicted")


#: what the analyst does where the label-free order leads the full-data ranking (:func:`_free_leads_sentence`)
FREE_LEADS_ADVICE = (" Any list holds only what the labels' own order keeps in most resamples; below it the consensus "
                     "order is that ranking of all samples: for features to take forward beyond the list, read its top "
                     "(consensus_rank in consensus.tsv, <key>_rank in adata.var), which no error bound covers.")


def _clipped_sentence(s: dict) -> str:
    """The methods whose full-data fit clipped heavy-tailed values first (``fit``'s ``clipped_tails``,
    ``propagate``: :func:`ssfs.methods.propagate.read_tails`), or read them as residuals' (``residual_tails``)
    ('' if none)."""
    clipped = (f"The genes' noise has heavy tails (median excess kurtosis {f.get('tail_weight', float('nan')):.1f}): "
               f"{m} clipped every gene's values to its median +- 3 robust standard deviations before ranking, so a "
               "few extreme values do not decide its order; its per-class statistics are of the clipped values."
               for m, f in (s.get("fit") or {}).items() if f.get("clipped_tails"))
    residual = (f"The values' heavy tails are one-sided in values of both signs (Pearson residuals of counts?): {m} "
                "kept them as they are (a sparse gene's tail is the cells holding its counts); where you have the "
                "counts, they are the better input."
                for m, f in (s.get("fit") or {}).items() if f.get("residual_tails"))
    return " ".join((*clipped, *residual))


def _outlying_sentence(s: dict, shown: int = 5) -> str:
    """The samples a method found much louder or quieter than the median one (``propagate``'s graph on samples
    scaled alike; ``outlying_samples``): noisy or failed arrays to look at ('' if none)."""
    parts = []
    for method, names in (s.get("outlying_samples") or {}).items():
        many = len(names) > 1
        listed = ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")
        parts.append(f"{method} found {_n(len(names), 'sample')} much louder or quieter than the median one "
                     f"({listed}: noisy or failed arrays?) and compared samples by the correlation of their profiles; "
                     f"the summary's outlying_samples lists {'them' if many else 'it'}")
    return (". ".join(parts) + ".") if parts else ""


def _populations_sentence(s: dict) -> str:
    """The populations a method found that no labeled class's group matches (``propagate``): a type nobody
    labeled, whose features its order puts with the labeled classes' or right after them ('' if none)."""
    parts = []
    for method, found in (s.get("populations") or {}).items():
        sizes = ", ".join(str(v) for v in found["samples"].values())
        many = len(found["samples"]) > 1
        parts.append(f"{method} found {'populations' if many else 'a population'} of {sizes} samples that no labeled "
                     f"class's group matches (a type nobody labeled?); {'their' if many else 'its'} features "
                     f"({', '.join(found['features'][:5])}, ...) rank with the labeled classes' markers or right "
                     "after them")
    return (". ".join(parts) + ".") if parts else ""


#: share of the resamples ranked without their labels from which the verdict warns
LABEL_FREE_SHARE = 0.25


def _no_list_possible(s: dict) -> bool:
    """Whether too few resamples used their labels for any feature to reach the threshold (the
    others select nothing: ``resamples_without_labels``)."""
    silent = s.get("resamples_without_labels", 0)
    return bool(silent) and s["resamples"] - silent < s["threshold"] * s["resamples"]


def _label_free_sentence(s: dict) -> str:
    """The methods that ranked many resamples without their labels (``label_free_resamples``). Where
    every method did so (``resamples_without_labels``) those resamples select nothing; else the
    lists can follow structure that is not the classes', which the error bound does not count."""
    many = {m: k for m, k in (s.get("label_free_resamples") or {}).items() if k >= LABEL_FREE_SHARE * s["resamples"]}
    if not many:
        return ""
    who = ", ".join(f"{m} ranked {k} of the {s['resamples']} resamples" for m, k in many.items())
    head = f"Too few labels in the resamples: {who} without the labels (label-free scores)"
    silent = s.get("resamples_without_labels", 0)
    if silent >= s["resamples"]:
        return (f"{head}: with so few labels in each half no resample selects anything (a list would be "
                "structure that is not the classes': a module, a batch, a type nobody labeled), so there is no "
                "list. The consensus order is the ranking of all samples, which uses every label; more labels "
                "per class give resamples that use them.")
    if _no_list_possible(s):
        return (f"{head}; a resample ranked so selects nothing (its list would be structure that is not the "
                f"classes': a module, a batch, a type nobody labeled), and the {s['resamples'] - silent} that used "
                f"labels cannot bring a feature to frequency {s['threshold']:g}, so there is no list. The consensus "
                "order is the ranking of all samples, which uses every label; more labels per class give resamples "
                "that use them.")
    if silent:
        return (f"{head}; a resample ranked so selects nothing (its list would be structure that is not the "
                f"classes': a module, a batch, a type nobody labeled), so the list counts the "
                f"{s['resamples'] - silent} resamples that used labels. Below the list the order is the ranking "
                "of all samples, which uses every label.")
    return (f"{head}, so the list may hold structure that is not the classes' (a module, a batch, a type nobody "
            "labeled), which the error bound does not count; a ranking of all samples at once (ssfs rank) uses "
            "every label.")


def _labels_in_resamples_sentence(s: dict) -> str:
    """With the labeled samples in every resample (``labeled_resampling`` shared) or in most, a few
    of each class left out in turn (rotated): what the stability and the bound then measure; split
    by ``labeled: auto`` on the weight of the propagated samples (``labeled_weight``): why ('' when
    the labels were split otherwise)."""
    how = s.get("labeled_resampling")
    if how == "split" and s.get("labeled_weight") is not None:
        return (f"The labels were split between the halves: the propagated samples weigh {s['labeled_weight']:.2f} on "
                f"all samples, below {SHARED_MIN_WEIGHT:g}, and on fewer than {PARTIAL_MIN_SAMPLES} samples few labels "
                "kept in the resamples gave lists of their chance patterns.")
    if how not in ("shared", "rotated"):
        return ""
    per_class = s.get("labeled_per_class") or {}
    counts = [c for c in per_class.values() if c > 0]
    why = [f"the smallest class has {min(counts)}"] if counts else []
    weight = s.get("labeled_weight")
    if weight is not None:  # labeled: auto decided on it
        why.append(f"the propagated samples weigh {weight:.2f} on all samples" + _weight_reason(how, weight)
                   + _graph_free_clause(s))
    few = f" ({'; '.join(why)})" if why else ""
    if how == "shared":
        return (f"Every labeled sample was in every resample{few}: the stability and the error bound count "
                "what other unlabeled samples would change, not a chance pattern of these few labels, which more "
                "labels would reveal.")
    out = resamples_sat_out(s["resamples"], s["threshold"])
    text = (f"Each resample held the labeled samples but a few of each class, left out in turn{few}: each sat out "
            f"of {out} of the {s['resamples']} resamples or more, so a chance pattern of one labeled sample cannot "
            f"reach frequency {s['threshold']:g}; the error bound counts what the unlabeled samples would change.")
    n = s["resamples"]
    short = [name for name, c in per_class.items() if c > 0 and n * rotation_window(c, n, s["threshold"]) // c < out]
    if short:  # 1-2 labels, or too few to leave out so often (each class keeps 2 in every resample)
        text += (f" The labels of {', '.join(short)} sat out of fewer (a class keeps 2 in every resample): a chance "
                 "pattern of those labels is counted by no bound.")
    return text


def _weight_reason(how: str, weight: float) -> str:
    """Why ``labeled: auto`` shared or rotated the labels at this weight of the propagated samples
    (:func:`ssfs.experiment.selection.labeled_resampling`)."""
    if weight < SHARED_MIN_WEIGHT:
        return (f", below {SHARED_MIN_WEIGHT:g}: the graph carries the classes little and the rankings rest on the "
                "labeled samples")
    if how == "shared":
        return ", so the rankings rest on many samples"
    return (f", but on fewer than {PARTIAL_MIN_SAMPLES} samples the few labels weigh too much in each resample to "
            "keep them all")


def _graph_free_clause(s: dict) -> str:
    """Where ``propagate`` took the genes' Pearson residual variance in turn with its graph's label-free
    scores (``graph_free``, :func:`ssfs.methods.propagate.with_graph_free`): what that means for the order."""
    if not s.get("graph_free"):
        return ""
    return ("; below the labeled classes' markers propagate's order then alternates its graph's label-free scores "
            "with the genes' Pearson residual variance, which needs no graph")


def _one_label_sentence(s: dict) -> str:
    """The classes with one labeled sample, which half of the half-samples saw unlabeled ('' if none)."""
    single = s.get("one_label_classes") or []
    if not single:
        return ""
    names = ", ".join(single)
    return (f"{'Class' if len(single) == 1 else 'Classes'} {names} had one labeled sample: in each complementary "
            "pair of half-samples one half at most held it, the other saw the class unlabeled.")


def _batch_sentence(s: dict) -> str:
    """Which methods compared the samples within their batches ('' without batches)."""
    b = s.get("batches")
    if not b:
        return ""
    if not b["methods"]:
        return f"None of the methods takes batches: the {b['n']} batches were not used."
    return f"{', '.join(b['methods'])} compared the samples within their {b['n']} batches."
