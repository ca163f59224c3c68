"""The run policy's host paths as data: what a recipe may never mount (CIS Docker 5.5, 5.31; PSS baseline: HostPath
Volumes), and the words of each verdict. catalogue.policy.mounts applies them to the path docker will use."""

from __future__ import annotations

NEVER_TREES = (
    "/etc",
    "/proc",
    "/sys",
    "/boot",
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/var/lib/docker",
    "/var/snap/docker",
    "/var/lib/containerd",
    "/var/lib/containers",
    "/var/lib/kubelet",
    "/var/spool/cron",
    "/var/spool/anacron",
    "/run/containerd",
    "/var/run/containerd",
    "/run/docker",
    "/var/run/docker",
    "/run/user",
    "/var/run/user",
    "/run/dbus",
    "/var/run/dbus",
    "/run/systemd",
    "/var/run/systemd",
    "/run",
    "/var/run",
    "/tmp/.X11-unix",
)
"""Host folders never mounted, nor anything inside them (CIS 5.5): system folders, the container engines' state
(docker, containerd, podman's /var/lib/containers), cron spools, and /run as a whole (dbus, systemd, every
daemon's socket lives there), and the X server's sockets (a client there types into the owner's session)."""
NEVER_EXACT = ("/", "/home", "/root", "/dev", "/var", "/var/lib", "/var/spool", "~")
"""Host folders never mounted whole (their subfolders fall under the other rules)."""
SOCKET_NAMES = (
    "docker.sock",
    "containerd.sock",
    "podman.sock",
    "crio.sock",
    "dockershim.sock",
    "cri-dockerd.sock",
    "buildkitd.sock",
    "system_bus_socket",
)
"""Container-engine, dbus and systemd sockets (CIS 5.31), wherever they are linked to: a container with one controls
the host."""
CREDENTIAL_PARTS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".docker",
    ".kube",
    ".azure",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".password-store",
    ".ngc",
    ".kaggle",
    ".mozilla",
    ".thunderbird",
    ".codex",
    ".claude",
    ".claude.json",
    ".npmrc",
    ".vault-token",
    ".terraform.d",
    ".gemini",
)
"""Folders and files that hold credentials, at any depth: never mounted (ssh, gpg, cloud and registry CLIs, NGC's
and Kaggle's API keys, browser and mail profiles, AI coding agents' logins, npm and Vault tokens)."""
CREDENTIAL_PATHS = (
    (".config", "gcloud"),
    (".config", "gh"),
    (".config", "hub"),
    (".config", "containers"),
    (".config", "doctl"),
    (".config", "rclone"),
    (".config", "google-chrome"),
    (".config", "chromium"),
    (".config", "BraveSoftware"),
    (".config", "op"),
    (".local", "share", "keyrings"),
    ("huggingface", "token"),
    ("huggingface", "stored_tokens"),
)
"""Runs of folder names that hold a developer CLI's credentials (gcloud, GitHub's gh and hub, podman's auth, rclone's
remotes, 1Password's op, ...), a browser's profiles (cookies, saved passwords) or the Hugging Face cache's token
files, wherever they appear in a path: never mounted."""
STARTUP_PATHS = (
    (".bashrc",),
    (".bash_profile",),
    (".bash_login",),
    (".bash_logout",),
    (".profile",),
    (".zshrc",),
    (".zshenv",),
    (".zprofile",),
    (".zlogin",),
    (".pam_environment",),
    (".xprofile",),
    (".xsessionrc",),
    (".gitconfig",),
    (".config", "git"),
    (".config", "fish"),
    (".config", "autostart"),
    (".config", "systemd"),
    (".config", "environment.d"),
    (".local", "bin"),
)
"""Runs of folder and file names that hold code the owner's shell, login, desktop session, systemd user manager or
git runs (a hook or pager in a git config), wherever they appear in a path: never mounted, since what a container
writes there runs on the host as the owner."""
HF_TOKEN_FILES = ("token", "stored_tokens")
"""The files of a Hugging Face cache folder (HF_HOME) that hold its tokens."""
CREDENTIAL_FILES = ("token", "stored_tokens", ".env", "credentials", "id_rsa", "id_ed25519", ".bash_history")
"""File names that hold credentials (the Hugging Face cache's `token`, ssh keys, dotenv files): never mounted."""

CREDENTIAL_HOME_PATHS = (
    *CREDENTIAL_PARTS,
    *("/".join(run) for run in CREDENTIAL_PATHS if run[0] != "huggingface"),
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    *("/".join(run) for run in STARTUP_PATHS),
)
"""Where the credentials above live in a home folder (`~`, `/root`, `/home/<user>`): a mount of a folder that holds
one of them (`~/.config`, `~/.cache`, `~/.cache/huggingface`) exposes it, so it is never too."""
CREDENTIAL_SYSTEM_PATHS = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/var/lib/docker",
    "/var/spool/cron",
    "/tmp/.X11-unix",
)
"""System paths that hold credentials or control of the host: a mount of a folder above one is never."""

MOUNT_NEVER_WHY = {
    "holds": "mounts a folder that holds {path} (credentials or control of the host)",
    "tree": "mounts the host's {path}, a system folder",
    "exact": "mounts the host's {path} whole",
    "home": "mounts a whole home folder",
    "socket": "mounts a container-engine or system socket: control of the host",
    "credentials": "mounts a folder of credentials",
    "startup": "mounts code the owner's shell, login, desktop session or git runs: what the container writes there "
    "runs on the host as the owner",
    "relative": "a relative host path that names no folder: docker resolves it to a folder above the one the runner "
    "runs in",
    "device": "a volume device given as a relative path: the engine resolves it against its own working folder (/)",
}
MOUNT_REPEATED_WHY = "a field given twice ({keys}): docker's CLI uses the last, so the text reads two ways"
MOUNT_REPEATED_HOW = "never allowed: give each field of the mount once"
MOUNT_RELATIVE_WHY = "mounts a host folder given relative to the folder the runner runs in"
MOUNT_BASIS = "CIS 5.5, 5.31; PSS baseline: HostPath Volumes"
MOUNT_CONSENT_WHY = "mounts a host folder the owner has not named (hosts file allow_mounts) nor the profile's HF cache"
NAMED_VOLUME_WHY = (
    "a named volume the runner did not create: docker reuses a volume of that name (another container's data) and "
    "keeps it after the run"
)
PROPAGATION_WHY = "mounts a host folder with shared propagation (mounts flow back to the host)"
PROPAGATION_BASIS = "CIS 5.19"
IMAGE_MOUNT_WHY = (
    "mounts the files of another image into the container (docker 28's image mounts): files the serving image then "
    "reads, such as Python modules on its path, come from that image"
)
MOUNT_TYPE_WHY = "a mount type the policy does not know ({kind}): docker or a plugin decides what it mounts"
KNOWN_MOUNT_TYPES = ("bind", "volume", "tmpfs", "image")
"""`--mount type=` values the policy judges; any other is never."""
