"""What ``workbench check`` asks of production: has the approval expired, and does a stream graded by this bundle
have an open validity alarm? Read with a clock tests and audits can set."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from workbench.core.errors import InputError
from workbench.features.monitoring import queries
from workbench.features.monitoring.records import StreamBundle, utc_text
from workbench.features.monitoring.report import stream_report
from workbench.store import Store

CLOCK_VARIABLE = "WORKBENCH_NOW"


def clock(as_of: str | None = None) -> datetime:
    """The end of day ``as_of`` (YYYY-MM-DD, UTC), else of ``WORKBENCH_NOW``'s day, else now."""
    text, source = (as_of, "--as-of") if as_of else (os.environ.get(CLOCK_VARIABLE), CLOCK_VARIABLE)
    if not text:
        return datetime.now(timezone.utc)
    try:
        day = datetime.strptime(text.strip(), "%Y-%m-%d").replace(tzinfo=timezone.utc)
    except ValueError:
        raise InputError(f"{source} must be a date YYYY-MM-DD, got {text!r}", fix="write e.g. 2026-06-30") from None
    return day + timedelta(days=1)


@dataclass
class ProductionCheck:
    problems: list[str] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)


def check_production(bundle: dict, file: str, store: Store | None, now: datetime) -> ProductionCheck:
    """Expiry (from the bundle alone) and, with a database, the validity alarms of the streams it grades."""
    res = ProductionCheck()
    sb = StreamBundle.from_bundle(bundle, file)
    day = utc_text(now)[:10]
    if now >= sb.expires_at:
        res.problems.append(
            f"{file}: the approval expired on {utc_text(sb.expires_at)[:10]} ({sb.revalidate_after} days after "
            f"approval on {sb.approved_at[:10]}, revalidate_after in the policy; as of {day}); re-calibrate on recent "
            "labels and export a new bundle.")
    else:
        res.compared.append(f"approval of {file} valid until {utc_text(sb.expires_at)[:10]} (revalidate_after "
                            f"{sb.revalidate_after} days; as of {day}).")
    if store is None or "monitor_epochs" not in store.table_names():
        return res
    for stream, epoch, esb in queries.epochs_of_bundle(store, sb.sha256):
        sid = queries.stream_id(store, stream)
        windows = stream_report(store, stream, sid, epoch, esb, until=now)
        n_traces = sum(w.n_items for w in windows)
        open_alarms = [a for a in (windows[-1].alarms if windows else ()) if a.kind == "validity"]
        if open_alarms:
            res.problems.append(f"stream '{stream}' has an open validity alarm: {open_alarms[0].sentence}")
        else:
            n = windows[-1].labels_since_approval if windows else 0
            res.compared.append(f"stream '{stream}': no validity alarm ({n_traces} traces, {n} labeled since "
                                f"approval, as of {day}).")
    return res
