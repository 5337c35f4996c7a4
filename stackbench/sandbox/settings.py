"""What a sandbox is made with: its limits, the reader's machine it stands for (its profile), and what the worker
passes in (environment, hidden folders, reachable registries, tools, where folders go)."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    timeout: float = 120.0  # seconds per command
    output_bytes: int = 200_000  # output kept per command (head and tail)
    memory_bytes: int = 2 * 1024**3
    file_size_bytes: int = 1024**3
    max_processes: int = 256
    disk_bytes: int = 4 * 1024**3  # the sandbox's folder (home, work, /tmp)
    max_files: int = 500_000  # files and folders in it: inodes run out like blocks do
    cpus: float = 1.0  # CPU time, in CPUs' worth, where a cpu cgroup can be made (0: no cap)


@dataclass(frozen=True)
class Profile:
    """The reader's machine: which Python their virtualenv is made from, which Node is installed, what network."""

    python: str = "/usr/bin/python3"
    python_version: str = ""
    node: str | None = None
    node_version: str = ""
    network: str = "registries"  # registries: the internet without the host and private networks; none

    def describe(self) -> dict[str, str]:
        return {
            "python": self.python_version or self.python,
            "node": self.node_version or ("none" if not self.node else self.node),
            "network": "registries only" if self.network == "registries" else "none",
        }


@dataclass(frozen=True)
class SandboxSettings:
    limits: Limits = field(default_factory=Limits)
    profile: Profile = field(default_factory=Profile)
    environment: dict[str, str] = field(default_factory=dict)  # passed through: proxies, locale, pip options
    hidden_paths: tuple[str, ...] = ()  # host folders never visible inside (the app's, var/, the worker's home)
    reachable_hosts: tuple[str, ...] = ()  # registries: reachable even where they resolve to a private address
    tools: dict[str, str] = field(default_factory=dict)  # name -> host file, read-only at /run/stackbench-tools
    templates_dir: str | None = None  # where reader virtualenvs are kept to copy from
    scratch_dir: str | None = None  # where sandbox folders are made (default: the system's temp folder)
    unconfined: bool = False
