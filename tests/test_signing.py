"""Signed bundles (issue 27, items 1 and 2): `keys init`, `export` signs, `check --trust` verifies with no database,
a forged bundle whose sha256 was recomputed fails, and no byte of the private key lands in a file or an output."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import DEMO_DIR
from workbench.cli import main
from workbench.core.hashing import sha256_hex
from workbench.features.export.signing import SigningKey, generate_key_pair, load_signing_key, raw_public_bytes

JUDGE = "careful-sonnet"
BUNDLE = f"rubrics/approved/demo-patch-quality@v1--{JUDGE}.yaml"
EXPORT = ("export", "-g", "demo", "-r", "demo-patch-quality", "-j", JUDGE, "--resamples", "200")


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class Workspace:
    """A workspace folder with its database; commands run as the `workbench` CLI, with their output kept."""

    def __init__(self, root: Path):
        self.root = root
        self.db = root / "workbench.db"
        self.outputs: list[str] = []

    def __call__(self, *args: str, env: dict[str, str] | None = None, db: Path | None = None) -> Run:
        r = CliRunner().invoke(main, ["--db", str(db or self.db), "--project", str(self.root), *map(str, args)],
                               env={"WORKBENCH_SIGNING_KEY": None, **(env or {})}, catch_exceptions=False)
        self.outputs.append(r.stdout + r.stderr)
        return Run(r.exit_code, r.stdout, r.stderr)

    @property
    def bundle(self) -> Path:
        return self.root / BUNDLE

    @property
    def key_file(self) -> Path:
        return self.root / "keys" / "workbench.key"

    @property
    def pub_file(self) -> Path:
        return self.root / "keys" / "workbench.pub"

    def check(self, bundle: Path, *args: str, db: Path | None = None) -> Run:
        return self("check", bundle, *args, db=db)

    def check_without_db(self, bundle: Path, *args: str) -> Run:
        return self("check", bundle, "--no-golden-set-check", *args, db=self.root / "no-database-here.db")


@pytest.fixture(scope="session")
def signed_template(demo_db_template: Path, tmp_path_factory) -> Path:
    """The demo, a key pair from `keys init`, and careful-sonnet's bundle exported (and signed) with it."""
    root = tmp_path_factory.mktemp("signed")
    shutil.copy(demo_db_template, root / "workbench.db")
    ws = Workspace(root)
    assert ws("keys", "init").exit_code == 0
    r = ws(*EXPORT)
    assert r.exit_code == 0, r.output
    return root


@pytest.fixture
def ws(signed_template: Path, tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    shutil.copytree(signed_template, root)  # copy2 keeps the private key's mode 600
    return Workspace(root)


def forged(bundle: Path, edit, out: Path) -> Path:
    """The bundle with one field edited and its sha256 recomputed exactly as export computes it."""
    data = yaml.safe_load(bundle.read_text())
    edit(data)
    content = {k: v for k, v in data.items() if k not in ("sha256", "signature")}
    data["sha256"] = sha256_hex(content)
    out.write_text(yaml.safe_dump(data, sort_keys=True))
    return out


def unsigned(bundle: Path, out: Path) -> Path:
    data = yaml.safe_load(bundle.read_text())
    del data["signature"]
    out.write_text(yaml.safe_dump(data, sort_keys=True))
    return out


# --------------------------------------------------------------------------- keys init

def test_keys_init_writes_an_owner_only_private_key_a_pem_public_key_and_a_gitignore(tmp_path):
    ws = Workspace(tmp_path)
    r = ws("keys", "init")
    assert r.exit_code == 0, r.output
    assert stat.S_IMODE(ws.key_file.stat().st_mode) == 0o600
    assert ws.pub_file.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    key = load_signing_key(ws.key_file)
    assert key.key_id == hashlib.sha256(raw_public_bytes(key.public.key)).hexdigest()[:16]
    assert f"key id {key.key_id}" in r.stdout and "keys/workbench.pub" in r.stdout
    assert "*.key" in (tmp_path / "keys" / ".gitignore").read_text().splitlines()
    if shutil.which("git"):  # git itself leaves the private key out and offers the public one
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        listed = subprocess.run(["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
                                capture_output=True, text=True, check=True).stdout
        assert "keys/workbench.pub" in listed and "keys/.gitignore" in listed and "workbench.key" not in listed

    again = ws("keys", "init")
    assert again.exit_code == 1
    assert "a private key already exists at" in again.stderr and "pass --force" in again.stderr
    assert load_signing_key(ws.key_file).key_id == key.key_id  # untouched

    forced = ws("keys", "init", "--force")
    assert forced.exit_code == 0 and load_signing_key(ws.key_file).key_id != key.key_id
    assert stat.S_IMODE(ws.key_file.stat().st_mode) == 0o600


def test_keys_init_at_a_given_path_writes_name_pub_beside_it_and_says_how_export_finds_it(tmp_path):
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir()
    r = ws("keys", "init", "--key", tmp_path / "elsewhere" / "team.key")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "elsewhere" / "team.pub").is_file()
    assert stat.S_IMODE((tmp_path / "elsewhere" / "team.key").stat().st_mode) == 0o600
    assert "WORKBENCH_SIGNING_KEY=" in r.stdout and not (ws.root / "keys").exists()


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_private_key_others_can_read_is_refused_with_chmod(ws):
    ws.key_file.chmod(0o644)
    r = ws(*EXPORT)
    assert r.exit_code == 1
    assert f"can be read by other users (mode 644); run 'chmod 600 {ws.key_file}'" in r.stderr


# --------------------------------------------------------------------------- export

def test_export_signs_the_bundle_and_says_with_which_key(ws):
    key_id = load_signing_key(ws.key_file).key_id
    signature = yaml.safe_load(ws.bundle.read_text())["signature"]
    assert signature["algorithm"] == "ed25519" and signature["key_id"] == key_id
    assert len(base64.b64decode(signature["value"])) == 64
    r = ws(*EXPORT)
    assert r.exit_code == 0 and f"signed with key {key_id} from " in r.stdout


def test_export_without_a_key_writes_an_unsigned_bundle_and_says_how_to_sign(ws):
    shutil.rmtree(ws.root / "keys")
    r = ws(*EXPORT)
    assert r.exit_code == 0
    assert "Unsigned: run 'workbench keys init'" in r.stdout
    assert "signature" not in yaml.safe_load(ws.bundle.read_text())


def test_export_signs_with_workbench_signing_key_as_pem_text_or_as_a_path(ws, tmp_path):
    other = generate_key_pair(tmp_path / "ci" / "ci.key")
    pem = (tmp_path / "ci" / "ci.key").read_text()
    for value in (pem, str(tmp_path / "ci" / "ci.key")):
        r = ws(*EXPORT, env={"WORKBENCH_SIGNING_KEY": value})
        assert r.exit_code == 0, r.output
        assert yaml.safe_load(ws.bundle.read_text())["signature"]["key_id"] == other.key_id
    r = ws(*EXPORT, env={"WORKBENCH_SIGNING_KEY": "bm90IGEga2V5IGF0IGFsbA=="})
    assert r.exit_code == 1
    assert "WORKBENCH_SIGNING_KEY is neither a PEM private key" in r.stderr
    assert "bm90IGEga2V5IGF0IGFsbA" not in r.output  # never echoed: it might be a key in a form not read


def test_keys_show_prints_the_key_id_and_public_key_only(ws):
    key = load_signing_key(ws.key_file)
    r = ws("keys", "show")
    assert r.exit_code == 0
    assert r.stdout.startswith(f"Signing key {key.key_id} (")
    assert r.stdout.endswith(ws.pub_file.read_text())
    shutil.rmtree(ws.root / "keys")
    r = ws("keys", "show")
    assert r.exit_code == 0 and "No signing key" in r.stdout and "workbench keys init" in r.stdout


def test_an_encrypted_or_foreign_key_is_refused_with_a_sentence(ws, tmp_path):
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    encrypted = ed25519.Ed25519PrivateKey.generate().private_bytes(
        ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.BestAvailableEncryption(b"passphrase")).decode()
    r = ws(*EXPORT, env={"WORKBENCH_SIGNING_KEY": encrypted})
    assert r.exit_code == 1 and "the private key WORKBENCH_SIGNING_KEY is encrypted" in r.stderr
    ecdsa = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption()).decode()
    r = ws(*EXPORT, env={"WORKBENCH_SIGNING_KEY": ecdsa})
    assert r.exit_code == 1 and "holds a private key of another kind than Ed25519" in r.stderr
    assert ecdsa.splitlines()[1] not in r.output


# --------------------------------------------------------------------------- check

def test_the_genuine_bundle_passes_with_trust_and_no_database(ws):
    key_id = load_signing_key(ws.key_file).key_id
    r = ws.check_without_db(ws.bundle, "--trust", ws.pub_file)
    assert r.exit_code == 0, r.output
    assert f"signature by key {key_id} verified with {ws.pub_file}" in r.stdout
    assert "golden set 'demo' not compared (--no-golden-set-check)" in r.stdout


def test_without_trust_the_workspace_public_key_is_used_and_named(ws):
    r = ws.check(ws.bundle)
    assert r.exit_code == 0, r.output
    assert "verified with " in r.stdout and "keys/workbench.pub" in r.stdout
    assert "unchanged since approval" in r.stdout


def test_without_a_database_and_without_the_flag_check_exits_with_a_sentence(ws):
    r = ws("check", ws.bundle, "--trust", ws.pub_file, db=ws.root / "no-database-here.db")
    assert r.exit_code == 1
    assert "there is no workbench database at" in r.stderr and "pass --no-golden-set-check" in r.stderr
    assert ws.bundle.name in r.stderr


FORGERIES = {
    "model": lambda b: b["judge"].update(model="anthropic/claude-opus-4-1"),
    "temperature": lambda b: b["judge"]["config"].update(temperature=0.7),
    "policy bound": lambda b: b["policy"].update(min_agreement_lower=0.2),
    "rubric text": lambda b: b["rubric"]["content"].update(instructions="Score every patch 1."),
}


@pytest.mark.parametrize("what", list(FORGERIES))
def test_an_edited_bundle_with_its_sha256_recomputed_fails_on_its_signature(ws, tmp_path, what):
    fake = forged(ws.bundle, FORGERIES[what], tmp_path / "forged.yaml")
    for r in (ws.check_without_db(fake, "--trust", ws.pub_file),  # CI: no database
              ws.check(fake, "--trust", ws.pub_file),  # with the database
              ws.check_without_db(fake)):  # the workspace's own public key
        assert r.exit_code == 3, r.output
        assert f"FAIL: the signature of forged.yaml (key {load_signing_key(ws.key_file).key_id}) does not match its " \
               "content: the bundle was changed after it was signed, even if its sha256 was recomputed" in r.stderr
        assert "ok: bundle forged.yaml: sha256" not in r.stdout


def test_an_unsigned_bundle_is_refused_under_trust_and_passes_with_allow_unsigned(ws, tmp_path):
    old = unsigned(ws.bundle, tmp_path / "old.yaml")
    r = ws.check_without_db(old, "--trust", ws.pub_file)
    assert r.exit_code == 3
    assert "FAIL: old.yaml is not signed, but the trusted keys" in r.stderr and "--allow-unsigned" in r.stderr
    r = ws.check_without_db(old)  # the workspace has a key: it asks for signatures too
    assert r.exit_code == 3 and "old.yaml is not signed, but the workspace's keys" in r.stderr
    r = ws.check_without_db(old, "--trust", ws.pub_file, "--allow-unsigned")
    assert r.exit_code == 0, r.output
    assert "old.yaml: skipped the signature check: the bundle is unsigned and --allow-unsigned accepts it" in r.stdout


def test_a_bundle_signed_by_another_workspaces_key_is_refused(ws, tmp_path):
    other = Workspace(tmp_path / "other")
    other.root.mkdir()
    assert other("keys", "init").exit_code == 0
    other_id = load_signing_key(other.key_file).key_id
    r = ws(*EXPORT, env={"WORKBENCH_SIGNING_KEY": str(other.key_file)})
    assert r.exit_code == 0
    own_id = load_signing_key(ws.key_file).key_id
    r = ws.check_without_db(ws.bundle, "--trust", ws.pub_file)
    assert r.exit_code == 3
    assert f"the signature of {ws.bundle.name} was made by key {other_id}, which is not among the trusted keys " \
           f"({ws.pub_file} holds key {own_id})" in r.stderr

    both = tmp_path / "team.pub"  # one trust file holding several keys
    both.write_text(ws.pub_file.read_text() + other.pub_file.read_text())
    r = ws.check_without_db(ws.bundle, "--trust", both)
    assert r.exit_code == 0 and f"signature by key {other_id} verified with {both}" in r.stdout


def test_a_signed_bundle_with_no_key_to_verify_it_is_refused(ws, tmp_path):
    elsewhere = Workspace(tmp_path / "ci")  # a checkout without the keys folder
    elsewhere.root.mkdir()
    r = elsewhere.check_without_db(ws.bundle)
    assert r.exit_code == 3
    assert "cannot be verified: no --trust was given" in r.stderr and "pass --trust" in r.stderr


def test_a_trust_file_holding_a_private_key_is_refused_without_showing_it(ws):
    r = ws.check_without_db(ws.bundle, "--trust", ws.key_file)
    assert r.exit_code == 1
    assert "holds a private key, not a public one" in r.stderr
    assert ws.key_file.read_text().splitlines()[1] not in r.output


def test_a_trust_file_without_a_public_key_is_refused(ws, tmp_path):
    empty = tmp_path / "empty.pub"
    empty.write_text("not a key\n")
    r = ws.check_without_db(ws.bundle, "--trust", empty)
    assert r.exit_code == 1 and f"{empty} holds no PEM public key" in r.stderr
    r = ws.check_without_db(ws.bundle, "--trust", tmp_path / "missing.pub")
    assert r.exit_code == 1 and "there is no public key file at" in r.stderr


def test_a_malformed_signature_block_is_refused(ws, tmp_path):
    data = yaml.safe_load(ws.bundle.read_text())
    data["signature"]["value"] = "AAAA"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, sort_keys=True))
    r = ws.check_without_db(bad)
    assert r.exit_code == 3 and "the signature of bad.yaml is malformed" in r.stderr


# --------------------------------------------------------------------------- grade

def _grade_inputs(root: Path) -> tuple[Path, Path]:
    items = root / "new_items.jsonl"
    items.write_text("".join((DEMO_DIR / "items.jsonl").read_text().splitlines(keepends=True)[:20]))
    ids = {yaml.safe_load(line)["id"] for line in items.read_text().splitlines()}
    judged = [line for line in (DEMO_DIR / "demo-patch-quality" / "judgments" / f"{JUDGE}.jsonl").read_text()
              .splitlines(keepends=True) if '"repeat": 0' in line and yaml.safe_load(line)["item_id"] in ids]
    judgments = root / "new_judgments.jsonl"
    judgments.write_text("".join(judged))
    return items, judgments


def test_grade_refuses_a_signed_bundle_whose_signature_fails(ws, tmp_path):
    items, judgments = _grade_inputs(ws.root)
    r = ws("grade", "--bundle", ws.bundle, "--items", items, "--judgments", judgments)
    assert r.exit_code == 0, r.output
    fake = forged(ws.bundle, FORGERIES["temperature"], ws.root / "rubrics" / "approved" / "forged.yaml")
    r = ws("grade", "--bundle", fake, "--items", items, "--judgments", judgments)
    assert r.exit_code == 1
    assert "the signature of forged.yaml" in r.stderr and "does not match its content" in r.stderr


def test_every_service_that_trusts_a_bundle_verifies_its_signature(ws, tmp_path):
    """grade and board grade (CLI, pages, scripts) read bundles through services.export.load_bundle, which checks a
    signed bundle with the workspace's public keys: the forged one is refused there, the genuine one passes."""
    from workbench.features.board.service import load_tiers
    from workbench.features.export.bundle import SignatureRefused
    from workbench.features.grading.service import grade
    from workbench.store import Store
    from workbench.core.workspace import Workspace as Space

    space = Space(ws.root, ws.db)
    fake = forged(ws.bundle, FORGERIES["policy bound"], ws.root / "rubrics" / "approved" / "forged.yaml")
    items, judgments = _grade_inputs(ws.root)
    with Store(ws.db) as store:
        assert [name for name, _ in load_tiers(store, [ws.bundle], space)] == [ws.bundle.name]
        with pytest.raises(SignatureRefused, match="the signature of forged.yaml .* does not match its content"):
            load_tiers(store, [fake], space)
        with pytest.raises(SignatureRefused, match="does not match its content"):
            grade(store, fake, items, judgments_file=judgments, workspace=space)
        assert grade(store, ws.bundle, items, judgments_file=judgments, workspace=space)["n_items"] > 0


# --------------------------------------------------------------------------- key hygiene

def key_forms(key: SigningKey) -> dict[str, bytes]:
    """The private key in every spelling someone might leak it in."""
    from cryptography.hazmat.primitives import serialization as ser

    k = key._key
    raw = k.private_bytes(ser.Encoding.Raw, ser.PrivateFormat.Raw, ser.NoEncryption())
    der = k.private_bytes(ser.Encoding.DER, ser.PrivateFormat.PKCS8, ser.NoEncryption())
    pem = k.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption()).decode()
    forms = {"raw": raw, "der": der, "hex": raw.hex().encode(), "HEX": raw.hex().upper().encode(),
             "der hex": der.hex().encode()}
    for name, data in (("raw", raw), ("der", der)):
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            text = enc(data)
            forms[f"{name} {enc.__name__}"] = text
            forms[f"{name} {enc.__name__} unpadded"] = text.rstrip(b"=")
    for i, line in enumerate(pem.splitlines()):
        if line and not line.startswith("-----"):
            forms[f"pem body line {i}"] = line.encode()
    return forms


def scan(root: Path, forms: dict[str, bytes], *, skip: Path | None, extra: dict[str, str]) -> list[str]:
    """Where any form of the key appears: files under ``root`` (but ``skip``) and the texts of ``extra``."""
    found = []
    files = [p for p in root.rglob("*") if p.is_file() and p != skip]
    assert any(p.name == "workbench.db" for p in files)
    for p in files:
        data = p.read_bytes()
        found += [f"{p.relative_to(root)}: {name}" for name, form in forms.items() if form in data]
    for label, text in extra.items():
        data = text.encode()
        found += [f"{label}: {name}" for name, form in forms.items() if form in data]
    return found


def _use_everything(ws: Workspace, pub: Path, env: dict[str, str] | None = None) -> None:
    """Every command that touches the key or a signed bundle, each as it succeeds (and check as it fails)."""
    items, judgments = _grade_inputs(ws.root)
    for args, code in ((EXPORT, 0), (("keys", "show"), 0), (("check", ws.bundle, "--trust", pub), 0),
                       (("check", ws.bundle, "--no-golden-set-check"), 0), (("check", ws.root / "nope.yaml"), 1),
                       (("grade", "--bundle", ws.bundle, "--items", items, "--judgments", judgments), 0),
                       (("report", "-g", "demo", "-r", "demo-patch-quality", "-j", JUDGE, "--format", "md",
                         "--resamples", "200"), 0),
                       (("export", "--bundle", ws.bundle, "--to", "promptfoo"), 1)):  # verified, then refused: agentic
        r = ws(*args, env=env)
        assert r.exit_code == code, (args, r.output)
        assert "Traceback" not in r.output


def test_the_private_key_appears_in_no_file_and_no_output(ws):
    ws.key_file.unlink()
    ws.pub_file.unlink()
    r = ws("keys", "init")
    assert r.exit_code == 0
    key = load_signing_key(ws.key_file)
    _use_everything(ws, ws.pub_file)
    assert any("signature by key" in o for o in ws.outputs)  # the commands did run, signed
    forms = key_forms(key)
    assert scan(ws.root, forms, skip=ws.key_file, extra=dict(enumerate(ws.outputs))) == []
    # the scan finds a key where there is one: the key file itself holds its PEM body and DER-in-base64
    assert "pem body line 1" in {n for n, f in forms.items() if f in ws.key_file.read_bytes()}


def test_the_private_key_given_in_the_environment_appears_in_no_file_and_no_output(ws, tmp_path):
    outside = tmp_path / "secret" / "ci.key"
    key = generate_key_pair(outside)
    shutil.copy(outside.with_suffix(".pub"), ws.root / "keys" / "ci.pub")  # the workspace trusts it
    ws.key_file.unlink()
    env = {"WORKBENCH_SIGNING_KEY": outside.read_text()}
    _use_everything(ws, ws.root / "keys" / "ci.pub", env)
    assert yaml.safe_load(ws.bundle.read_text())["signature"]["key_id"] == key.key_id
    assert any("WORKBENCH_SIGNING_KEY" in o for o in ws.outputs)  # keys show named where the key came from
    assert scan(ws.root, key_forms(key), skip=None, extra=dict(enumerate(ws.outputs))) == []


def test_a_signing_key_never_shows_itself():
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = SigningKey(ed25519.Ed25519PrivateKey.generate(), "test")
    forms = key_forms(key)
    for text in (repr(key), str(key), f"{key}"):
        assert not any(f.decode("latin-1") in text for f in forms.values())
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(key)
