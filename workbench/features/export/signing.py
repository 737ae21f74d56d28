"""Ed25519 keys and signatures: a workspace's signing key pair, trusted public keys, and signatures over canonical JSON.

The private key lives in one owner-only file (PKCS#8 PEM, mode 600, as
``openssl genpkey -algorithm ed25519`` writes it) or in ``WORKBENCH_SIGNING_KEY``
(the PEM text itself, or the path of such a file); the public key beside it is
``NAME.pub`` (SubjectPublicKeyInfo PEM). A key's id is the first 16 hex digits
of the sha256 of its raw 32-byte public key. A signature is Ed25519 over the
UTF-8 canonical JSON of an object (:func:`workbench.core.hashing.canonical_json`), so
anyone can verify it with the public key alone, e.g. ``openssl pkeyutl -verify
-pubin -inkey NAME.pub -rawin -in content.json -sigfile sig.bin``.

No byte of a private key is ever put in a message, a repr or a log line: errors
name the file (or the variable) and the fix, never what it holds.
The crypto is the ``cryptography`` package's; it is imported on first use, so a
workspace that never signs never loads it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from workbench.core.errors import ConfigError, WorkbenchError
from workbench.core.hashing import canonical_json

ALGORITHM = "ed25519"
SIGNING_KEY_ENV = "WORKBENCH_SIGNING_KEY"
KEY_NAME = "workbench"  # keys/workbench.key and keys/workbench.pub in a workspace
PRIVATE_SUFFIX = ".key"
PUBLIC_SUFFIX = ".pub"
PRIVATE_PEM = "-----BEGIN PRIVATE KEY-----"
_PUBLIC_PEM = re.compile(r"-----BEGIN PUBLIC KEY-----\s.*?-----END PUBLIC KEY-----", re.S)
_ANY_PRIVATE_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_KEY_ID = re.compile(r"^[0-9a-f]{16}$")
GITIGNORE = "# Private signing keys stay on this machine ('workbench keys init' wrote this file).\n*.key\n*.key.tmp\n"


class KeyFileError(WorkbenchError):
    """A private or public key file (or WORKBENCH_SIGNING_KEY) that cannot be used; names the file and the fix."""


class SignatureError(WorkbenchError):
    """A signature that does not verify; ``reason`` is untrusted | mismatch | malformed."""

    def __init__(self, message: str, *, reason: str, key_id: str | None = None):
        self.reason, self.key_id = reason, key_id
        super().__init__(message)


def _crypto() -> Any:
    """The Ed25519 primitives and serialization of ``cryptography``, imported on first use."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - a declared dependency; an install without it says what to do
        raise ConfigError("signing bundles needs the 'cryptography' package; pip install cryptography") from None
    return ed25519, serialization


def raw_public_bytes(public_key: Any) -> bytes:
    _, ser = _crypto()
    return public_key.public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)


def key_id_of(public_key: Any) -> str:
    """First 16 hex digits of the sha256 of the raw 32-byte Ed25519 public key."""
    return hashlib.sha256(raw_public_bytes(public_key)).hexdigest()[:16]


def public_pem(public_key: Any) -> str:
    _, ser = _crypto()
    return public_key.public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


@dataclass(frozen=True)
class PublicKey:
    key: Any = field(repr=False)  # cryptography's Ed25519PublicKey
    source: str  # the file it was read from, as shown to the user

    @property
    def key_id(self) -> str:
        return key_id_of(self.key)

    def verifies(self, signature: bytes, message: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self.key.verify(signature, message)
        except InvalidSignature:
            return False
        return True


class SigningKey:
    """A loaded private key and where it came from; its repr and str never show the key."""

    __slots__ = ("_key", "source")

    def __init__(self, key: Any, source: str):
        self._key = key
        self.source = source  # "keys/workbench.key" or "WORKBENCH_SIGNING_KEY"

    def __repr__(self) -> str:
        return f"SigningKey(key_id={self.key_id!r}, source={self.source!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # nobody pickles a private key into a cache or a log by accident
        raise TypeError("a SigningKey is not picklable")

    @property
    def public(self) -> PublicKey:
        return PublicKey(self._key.public_key(), self.source)

    @property
    def key_id(self) -> str:
        return key_id_of(self._key.public_key())

    def sign_json(self, obj: Any) -> dict:
        """The signature block of ``obj``: Ed25519 over its canonical JSON, with the key's id."""
        value = self._key.sign(canonical_json(obj).encode("utf-8"))
        return {"algorithm": ALGORITHM, "key_id": self.key_id, "value": base64.b64encode(value).decode("ascii")}


# --------------------------------------------------------------------------- writing a key pair

def public_path_for(private_path: Path) -> Path:
    """``NAME.key`` -> ``NAME.pub``; any other name gets ``.pub`` appended."""
    private_path = Path(private_path)
    if private_path.suffix == PRIVATE_SUFFIX:
        return private_path.with_suffix(PUBLIC_SUFFIX)
    return private_path.with_name(private_path.name + PUBLIC_SUFFIX)


def generate_key_pair(private_path: str | Path, *, force: bool = False, shown: str | None = None) -> SigningKey:
    """Write a new Ed25519 private key (mode 600, never over an existing one unless ``force``) and ``NAME.pub``.

    The private file is created with O_CREAT|O_EXCL and mode 0o600 (a replaced one through a temp file made the
    same way, then renamed over it), so no moment exists where another user could read it.
    """
    ed25519, ser = _crypto()
    private_path = Path(private_path)
    public_path = public_path_for(private_path)
    shown = shown or str(private_path)
    if not force:
        for path, what in ((private_path, "a private key"), (public_path, "a public key")):
            if path.exists():
                raise KeyFileError(f"{what} already exists at {_beside(shown, path)}; keep it, or pass --force to "
                                   "replace the pair (bundles signed with the old key then verify only with the old "
                                   "public key).")
    private_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption())
    if force:
        tmp = private_path.with_name(private_path.name + ".tmp")
        tmp.unlink(missing_ok=True)
        _write_owner_only(tmp, pem)
        os.replace(tmp, private_path)
    else:
        _write_owner_only(private_path, pem)
    del pem
    tmp_pub = public_path.with_name(public_path.name + ".tmp")
    tmp_pub.write_text(public_pem(key.public_key()), encoding="ascii")
    os.replace(tmp_pub, public_path)
    return SigningKey(key, shown)


def _write_owner_only(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    except FileExistsError:
        raise KeyFileError(f"a private key already exists at {path}; keep it, or pass --force to replace it.") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def write_gitignore(keys_dir: Path) -> Path:
    """keys/.gitignore ignoring every private key in the folder (public keys are meant to be committed)."""
    path = Path(keys_dir) / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if "*.key" not in text.splitlines():
        path.write_text(text + ("" if not text or text.endswith("\n") else "\n") + GITIGNORE, encoding="utf-8")
    return path


def _beside(shown: str, path: Path) -> str:
    """``path`` spelt like ``shown`` (the private key's path as the user sees it) when it sits beside it."""
    return str(Path(shown).with_name(path.name))


# --------------------------------------------------------------------------- loading keys

def load_signing_key(path: str | Path, *, shown: str | None = None) -> SigningKey:
    """Read an unencrypted PKCS#8 PEM Ed25519 private key, refusing a file that group or others can read."""
    path = Path(path)
    shown = shown or str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise KeyFileError(f"there is no private key at {shown}; create one with 'workbench keys init'.") from None
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"the private key {shown} can be read by other users (mode {stat.S_IMODE(mode):o}); "
                           f"run 'chmod 600 {shown}' and try again.")
    return _private_from_pem(path.read_bytes(), shown)


def signing_key_from_env(value: str, *, name: str = SIGNING_KEY_ENV) -> SigningKey:
    """``WORKBENCH_SIGNING_KEY``: the PEM text of a private key, or the path of a key file."""
    text = value.strip()
    if text.startswith("-----BEGIN"):
        return _private_from_pem(text.encode("ascii", "replace"), name)
    if "\n" not in text and len(text) < 4096:
        try:
            is_file = Path(text).expanduser().is_file()
        except (OSError, ValueError):
            is_file = False
        if is_file:
            return load_signing_key(Path(text).expanduser(), shown=f"{Path(text).expanduser()} (from {name})")
    # never echo the value: it may be a key in a form we do not read
    raise KeyFileError(f"{name} is neither a PEM private key ({PRIVATE_PEM} ...) nor the path of a key file; set it "
                       "to the text of the file 'workbench keys init' wrote, or to that file's path.")


def _private_from_pem(data: bytes, shown: str) -> SigningKey:
    ed25519, ser = _crypto()
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        key = ser.load_pem_private_key(data, password=None)
    except TypeError:  # encrypted: a passphrase-protected key is not read (yet)
        raise KeyFileError(f"the private key {shown} is encrypted; the workbench reads unencrypted keys kept "
                           "owner-only (mode 600): create one with 'workbench keys init'.") from None
    except (ValueError, binascii.Error, UnsupportedAlgorithm):  # not the library's message: it may quote the input
        raise KeyFileError(f"{shown} holds no PEM private key ({PRIVATE_PEM} ...); give the key file "
                           "'workbench keys init' wrote.") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise KeyFileError(f"{shown} holds a private key of another kind than Ed25519; create an Ed25519 key with "
                           "'workbench keys init' (or 'openssl genpkey -algorithm ed25519').")
    return SigningKey(key, shown)


def find_signing_key(private_path: Path, *, shown: str | None = None,
                     environ: Mapping[str, str] | None = None) -> SigningKey | None:
    """The key to sign with: ``WORKBENCH_SIGNING_KEY`` when set, else ``private_path`` when it exists, else None."""
    env = os.environ if environ is None else environ
    if env.get(SIGNING_KEY_ENV, "").strip():
        return signing_key_from_env(env[SIGNING_KEY_ENV])
    if Path(private_path).exists():
        return load_signing_key(private_path, shown=shown)
    return None


def load_public_keys(path: str | Path, *, shown: str | None = None) -> list[PublicKey]:
    """Every PEM public key in a file (a trust file may hold several), each Ed25519."""
    ed25519, ser = _crypto()
    path = Path(path)
    shown = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise KeyFileError(f"there is no public key file at {shown}; give the NAME.pub that 'workbench keys init' "
                           "wrote beside the signing key.") from None
    if _ANY_PRIVATE_PEM.search(text):  # never read or quoted: it is a secret in the wrong place
        raise KeyFileError(f"{shown} holds a private key, not a public one; give the NAME.pub beside it instead, and "
                           "keep the private key out of CI and shared folders.")
    keys = []
    for n, block in enumerate(_PUBLIC_PEM.findall(text), 1):
        try:
            key = ser.load_pem_public_key(block.encode("ascii", "replace"))
        except ValueError:
            raise KeyFileError(f"{shown}: public key {n} is not valid PEM; copy it again from the NAME.pub "
                               "'workbench keys init' wrote.") from None
        if not isinstance(key, ed25519.Ed25519PublicKey):
            raise KeyFileError(f"{shown}: public key {n} is not an Ed25519 key; bundles are signed with Ed25519 "
                               "keys ('workbench keys init').")
        keys.append(PublicKey(key, shown))
    if not keys:
        raise KeyFileError(f"{shown} holds no PEM public key (-----BEGIN PUBLIC KEY----- ...); give the NAME.pub "
                           "that 'workbench keys init' wrote.")
    return keys


@dataclass(frozen=True)
class TrustedKeys:
    """The public keys a signature may come from, and whether they were given (--trust) or found in the workspace."""

    keys: tuple[PublicKey, ...] = ()
    given: bool = False  # --trust FILE, rather than the workspace's own keys folder
    folder: str | None = None  # the workspace's keys folder, as shown, when that is where they come from

    @classmethod
    def from_files(cls, files: Iterable[tuple[Path, str]]) -> "TrustedKeys":
        """``files``: (path, as shown)."""
        return cls(tuple(k for path, shown in files for k in load_public_keys(path, shown=shown)), given=True)

    @classmethod
    def from_folder(cls, folder: Path, shown: str) -> "TrustedKeys":
        """Every ``*.pub`` in the workspace's keys folder (none when it does not exist)."""
        files = sorted(Path(folder).glob("*" + PUBLIC_SUFFIX)) if Path(folder).is_dir() else []
        return cls(tuple(k for f in files for k in load_public_keys(f, shown=str(Path(shown) / f.name))),
                   given=False, folder=shown)

    def describe(self) -> str:
        """``keys/a.pub holds key 1a2b…; keys/b.pub holds keys 3c4d…, 5e6f…``, or where none was found."""
        if not self.keys:
            return f"no public key in {self.folder}" if self.folder else "no public key"
        by_file: dict[str, list[str]] = {}
        for k in self.keys:
            by_file.setdefault(k.source, []).append(k.key_id)
        return "; ".join(f"{src} holds key{'s' if len(ids) > 1 else ''} {', '.join(ids)}"
                         for src, ids in by_file.items())

    def find(self, key_id: str) -> PublicKey | None:
        return next((k for k in self.keys if k.key_id == key_id), None)


# --------------------------------------------------------------------------- verifying

def verify_json(signature: Any, obj: Any, trusted: TrustedKeys) -> PublicKey:
    """The trusted key whose Ed25519 signature ``signature`` (a signature block) is over ``obj``'s canonical JSON.

    Raises :class:`SignatureError`: ``malformed`` (not a signature block this module writes), ``untrusted`` (its key
    id is none of ``trusted``), ``mismatch`` (the key is trusted but the content is not what it signed).
    """
    if not (isinstance(signature, dict) and signature.get("algorithm") == ALGORITHM
            and isinstance(signature.get("key_id"), str) and _KEY_ID.match(signature["key_id"])
            and isinstance(signature.get("value"), str)):
        raise SignatureError("the signature block is malformed (it needs algorithm ed25519, a 16-hex-digit key_id "
                             "and a base64 value)", reason="malformed")
    key_id = signature["key_id"]
    try:
        value = base64.b64decode(signature["value"], validate=True)
    except (binascii.Error, ValueError):
        value = b""
    if len(value) != 64:
        raise SignatureError("the signature value is not 64 bytes of base64", reason="malformed", key_id=key_id)
    key = trusted.find(key_id)
    if key is None:
        raise SignatureError(f"key {key_id} is not trusted ({trusted.describe()})", reason="untrusted", key_id=key_id)
    if not key.verifies(value, canonical_json(obj).encode("utf-8")):
        raise SignatureError(f"the signature by key {key_id} does not match the content", reason="mismatch",
                             key_id=key_id)
    return key
