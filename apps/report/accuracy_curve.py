"""Time to accuracy from a metrics log: pacer-report's comparison of two runs' training progress.

The scheduler writes an `{"type":"accuracy","index","after_iters","t_s","accuracy"}` record each
time the application reports its test accuracy (GradientSync::ReportAccuracy, --eval_every in the
apps), stamped with the start of the reporting worker's next iteration. A run's curve is its
evaluator's accuracies over the time since that worker's first iteration began. Two runs compare
at one target: the best accuracy the reference reached (a short BSP stretch reaches less than the
run), and each run's time to it is the first evaluation at or above it.
"""


def curve(records, iters):
    """[(seconds since the evaluator's first iteration, accuracy)] of a run, in time order; [] if
    the run reported none. `iters`: the iteration records by worker index."""
    evaluations = [r for r in records if r.get("type") == "accuracy"]
    if not evaluations:
        return []
    index = evaluations[0]["index"]
    start = min(r["t_start_s"] for r in iters[index])
    return sorted((r["t_s"] - start, r["accuracy"]) for r in evaluations if r["index"] == index)


def time_to(points, target):
    """Seconds to the first evaluation at or above `target`; None if none reached it."""
    return next((t for t, accuracy in points if accuracy >= target), None)


def compare(run_points, reference_points):
    """{"target", "run_s", "reference_s"} at the reference's best accuracy, or None where either run
    has no evaluation."""
    if not run_points or not reference_points:
        return None
    target = max(accuracy for _, accuracy in reference_points)
    return {"target": target, "run_s": time_to(run_points, target),
            "reference_s": time_to(reference_points, target)}


def statement(name, reference_name, compared):
    """The comparison in words."""
    target, run_s, reference_s = compared["target"], compared["run_s"], compared["reference_s"]
    head = f"time to {target:.3f} accuracy ({reference_name}'s best): "
    if run_s is None:
        return head + f"{name} did not reach it; {reference_name} {reference_s:.1f} s"
    change = 1 - run_s / reference_s
    return (head + f"{name} {run_s:.1f} s, {reference_name} {reference_s:.1f} s "
            f"({abs(change):.0%} {'less' if change >= 0 else 'more'})")


def draw(axis, runs):
    """Accuracy over time of each run: [(name, points)]."""
    for name, points in runs:
        axis.plot([t for t, _ in points], [a for _, a in points], marker=".", linewidth=1.2,
                  label=name)
    axis.set_ylabel("test accuracy")
    axis.set_xlabel("time since start (s)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8, loc="lower right")
