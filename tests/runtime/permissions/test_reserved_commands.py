"""The reserved Git/GitHub delivery commands: positive and negative cases, wrappers, quoting."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.runtime.permissions.reserved_commands import (
    MAX_COMMAND_CHARS,
    MAX_NESTING_DEPTH,
    MAX_PROGRAM_WORDS,
    RESERVED_RULES,
    assess_command,
    find_reserved,
)

RESERVED: list[tuple[str, str]] = [
    # git push, every form
    ("git push", "git-push"),
    ("git push origin main", "git-push"),
    ("git push --force origin main", "git-push"),
    ("git push -f", "git-push"),
    ("git push --force-with-lease", "git-push"),
    ("git push --delete origin feature", "git-push"),
    ("git push origin :feature", "git-push"),
    ("git push origin +main:main", "git-push"),
    ("git push --mirror", "git-push"),
    ("git push --tags", "git-push"),
    ("GIT push", "git-push"),
    ("/usr/bin/git push", "git-push"),
    ("git-push origin", "git-push"),
    # global options before the subcommand
    ("git -C /tmp/x push", "git-push"),
    ("git -c user.name=x push", "git-push"),
    ("git --git-dir .git --work-tree . push", "git-push"),
    ("git --git-dir=.git push", "git-push"),
    ("git --no-pager push", "git-push"),
    # prefixes and wrappers
    ("FOO=1 git push", "git-push"),
    ("FOO=1 BAR='a b' git push", "git-push"),
    ("env FOO=1 git push", "git-push"),
    ("env -i PATH=/bin git push", "git-push"),
    ("command git push", "git-push"),
    ("exec git push", "git-push"),
    ("nohup git push &", "git-push"),
    ("time git push", "git-push"),
    ("sudo -u me git push", "git-push"),
    ("timeout 30 git push", "git-push"),
    ("nice -n 10 git push", "git-push"),
    ("xargs git push", "git-push"),
    ("find . -name x -exec git push \\;", "git-push"),
    ("if true; then git push; fi", "git-push"),
    ("for r in a b; do git push $r; done", "git-push"),
    ("! git push", "git-push"),
    ("{ git push; }", "git-push"),
    # separators
    ("git add . && git commit -m x && git push", "git-push"),
    ("make test || git push", "git-push"),
    ("ls; git push", "git-push"),
    ("ls | git push", "git-push"),
    ("ls |& git push", "git-push"),
    ("sleep 1 & git push", "git-push"),
    ("echo hi\ngit push", "git-push"),
    ("(cd sub && git push)", "git-push"),
    ("true#; git push", "git-push"),
    ("git \\\npush", "git-push"),
    # redirections in odd places
    ("git push > /dev/null 2>&1", "git-push"),
    ("git 2>/dev/null push", "git-push"),
    (">log git push", "git-push"),
    # shell wrappers and scripts
    ("sh -c 'git push'", "git-push"),
    ('bash -c "cd x && git push origin main"', "git-push"),
    ("bash -lc 'git push'", "git-push"),
    ("bash -e -c 'git push'", "git-push"),
    ("zsh -c 'git push'", "git-push"),
    ("/bin/sh -c 'FOO=1 git push'", "git-push"),
    ("sh -c \"sh -c 'git push'\"", "git-push"),
    ("eval 'git push'", "git-push"),
    ("eval git push", "git-push"),
    ("ssh host 'cd repo && git push'", "git-push"),
    ("watch 'git push'", "git-push"),
    ("env -S 'git push'", "git-push"),
    ("bash <<< 'git push'", "git-push"),
    ("bash <<EOF\ngit push\nEOF", "git-push"),
    # command substitution
    ("echo $(git push)", "git-push"),
    ('echo "$(git push)"', "git-push"),
    ("echo `git push`", "git-push"),
    ('echo "`git push`"', "git-push"),
    ("x=$(a $(git push))", "git-push"),
    ("cat <(git push)", "git-push"),
    # other publishing
    ("git send-email HEAD~1", "git-send-email"),
    ("git svn dcommit", "git-svn-dcommit"),
    ("git p4 submit", "git-p4-submit"),
    # remotes
    ("git remote add origin https://x", "git-remote-change"),
    ("git remote set-url origin https://x", "git-remote-change"),
    ("git remote set-url --push origin https://x", "git-remote-change"),
    ("git remote remove origin", "git-remote-change"),
    ("git remote rm origin", "git-remote-change"),
    ("git remote rename origin upstream", "git-remote-change"),
    ("git remote -v add x y", "git-remote-change"),
    ("git remote set-branches origin main", "git-remote-change"),
    ("git config remote.origin.url https://x", "git-config-remote"),
    ("git config --add remote.origin.pushurl https://x", "git-config-remote"),
    ("git config --unset remote.origin.url", "git-config-remote"),
    ("git config --global url.https://x.insteadOf https://y", "git-config-remote"),
    ("git config set remote.origin.url x", "git-config-remote"),
    ("git config --rename-section remote.origin remote.x", "git-config-remote"),
    ("git config -e", "git-config-remote"),
    # refs
    ("git update-ref -d refs/heads/main", "git-update-ref"),
    ("git update-ref refs/heads/main HEAD~3", "git-update-ref"),
    ("git update-ref refs/remotes/origin/main HEAD", "git-update-ref"),
    # aliases and dynamic subcommands
    ("git -c alias.p='!git push' p", "git-alias-injection"),
    ("git -c Alias.x=push x", "git-alias-injection"),
    ("git --config-env=alias.x=V x", "git-alias-injection"),
    ("git --config-env alias.x=V x", "git-alias-injection"),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=push git x",
        "git-alias-injection",
    ),
    ("GIT_CONFIG_PARAMETERS=x git status", "git-alias-injection"),
    ("git $SUB origin", "git-dynamic-subcommand"),
    ("git `echo push`", "git-dynamic-subcommand"),
    ("echo push | xargs git", "git-dynamic-subcommand"),
    ("echo pr | xargs gh", "git-dynamic-subcommand"),
    ("gh $GROUP create", "git-dynamic-subcommand"),
    # gh
    ("gh pr create --fill", "gh-pr-write"),
    ("gh pr merge 12 --squash", "gh-pr-write"),
    ("gh pr close 12", "gh-pr-write"),
    ("gh pr review 12 --approve", "gh-pr-write"),
    ("gh pr comment 12 -b hi", "gh-pr-write"),
    ("gh pr edit 12 --title x", "gh-pr-write"),
    ("gh pr ready 12", "gh-pr-write"),
    ("gh pr update-branch 12", "gh-pr-write"),
    ("gh pr --repo o/r view 1", "gh-pr-write"),  # a flag value read as the verb: fail closed
    ("gh release create v1.0", "gh-release-write"),
    ("gh release upload v1.0 a.tgz", "gh-release-write"),
    ("gh release edit v1.0 --draft=false", "gh-release-write"),
    ("gh release delete v1.0", "gh-release-write"),
    ("gh repo delete o/r --yes", "gh-repo-write"),
    ("gh repo create o/r", "gh-repo-write"),
    ("gh repo edit --visibility public", "gh-repo-write"),
    ("gh repo fork", "gh-repo-write"),
    ("gh repo sync", "gh-repo-write"),
    ("gh repo rename x", "gh-repo-write"),
    ("gh api -X POST repos/o/r/pulls", "gh-api-write"),
    ("gh api --method=DELETE repos/o/r", "gh-api-write"),
    ("gh api -XPATCH repos/o/r", "gh-api-write"),
    ("gh api repos/o/r/pulls -f title=x -f head=y", "gh-api-write"),
    ("gh api repos/o/r/issues --field title=x", "gh-api-write"),
    ("gh api repos/o/r/issues -Ftitle=x", "gh-api-write"),
    ("gh api repos/o/r/releases --input body.json", "gh-api-write"),
    (
        "gh api graphql -f query='mutation { mergePullRequest(input: {}) { clientMutationId } }'",
        "gh-api-write",
    ),
    ("gh api graphql -F query=@q.graphql", "gh-api-write"),
    ("gh workflow run deploy.yml", "gh-workflow-run"),
    ("gh workflow -R o/r run deploy.yml", "gh-workflow-run"),
    ("gh alias set co 'pr create'", "gh-alias-define"),
    ("gh alias import aliases.yml", "gh-alias-define"),
    # hub
    ("hub push", "git-push"),
    ("hub pull-request -m x", "hub-delivery"),
    ("hub create", "hub-delivery"),
    ("hub delete o/r", "hub-delivery"),
    ("hub fork", "hub-delivery"),
    ("hub release create v1", "hub-delivery"),
    ("hub api -X POST repos/o/r/pulls", "gh-api-write"),
    ("hub api repos/o/r/issues -F title=x", "gh-api-write"),
    ("hub -C dir push", "git-push"),
    # transports under push, and plumbing that moves objects to another repository
    ("git send-pack ../remote.git main", "git-transport"),
    ("git http-push https://x/r.git main", "git-transport"),
    ("git subtree push --prefix=lib ../remote.git main", "git-transport"),
    ("git lfs push origin main", "git-transport"),
    ("git receive-pack ../remote.git", "git-transport"),
    ("git-send-pack ../remote.git main", "git-transport"),
    # configuration writes: aliases, hooks, includes, remotes
    ("git config alias.p push && git p", "git-config-write"),
    ("git config --global alias.p push", "git-config-write"),
    ("git config core.hooksPath hooks", "git-config-write"),
    ("git config include.path ../evil", "git-config-write"),
    ("git -c core.sshCommand=x fetch", "git-config-write"),
    ("git --config-env=core.pager=X log", "git-config-write"),
    # git pointed at another repository or other programs
    ("git --git-dir=../remote.git update-server-info", "git-repository-redirect"),
    ("git --work-tree=/tmp status", "git-repository-redirect"),
    ("git --exec-path=/tmp/evil status", "git-repository-redirect"),
    # options and subcommands that run commands
    ("git rebase --exec 'make' main", "git-runs-command"),
    ("git rebase -xmake main", "git-runs-command"),
    ("git bisect run make", "git-runs-command"),
    ("git submodule foreach ls", "git-runs-command"),
    ("git grep -O foo", "git-runs-command"),
    ("git fetch --upload-pack=evil origin", "git-runs-command"),
    ("git init --template=tpl sub", "git-runs-command"),
    ("git difftool --extcmd=evil", "git-runs-command"),
    ("git merge -s evil topic", "git-runs-command"),
    ("git pull --strategy=evil origin main", "git-runs-command"),
    ("git STATUS", "git-other-subcommand"),  # no builtin: git would look up an alias
    ("gh PR list", "gh-other"),
    # anything not on the local list: aliases, external programs, clone
    ("git p", "git-other-subcommand"),
    ("git clone --bare . ../copy.git", "git-other-subcommand"),
    ("git filter-branch --tree-filter x", "git-other-subcommand"),
    ("git annex copy --to origin", "git-other-subcommand"),
    ("git submodule sync", "git-other-subcommand"),
    ("git --bare status", "git-other-subcommand"),
    ("gh co 12", "gh-other"),
    ("gh issue create -t x", "gh-other"),
    ("gh secret set X", "gh-other"),
    ("hub issue create", "gh-other"),
    ("hub sync", "git-other-subcommand"),
    # .git paths: hooks and configuration git runs or reads
    ("cp evil .git/hooks/pre-commit", "git-control-path"),
    ("echo x > sub/.git/config", "git-control-path"),
    ("ln -s x .GIT/hooks/post-commit", "git-control-path"),
    ("cp evil /usr/local/bin/git", "git-control-path"),
    ("echo x > git", "git-control-path"),
    ("mv x git-st", "git-control-path"),
    ("install -m 755 x /root/.local/bin/gh", "git-control-path"),
    # startup files: aliases and functions defined there run in later commands
    ("echo '[alias] st = push' >> /root/.gitconfig", "startup-file"),
    ("tee -a /home/u/.bashrc", "startup-file"),
    ("cp x /root/.config/git/config", "startup-file"),
    ("cp x /etc/profile.d/git.sh", "startup-file"),
    ("cat x > /etc/gitconfig", "startup-file"),
]

#: Commands outside the subset Baton reads with certainty, or that evaluate text or run a
#: command from their arguments: opaque, never granted automatically.
OPAQUE: list[str] = [
    "git \\\nstatus",  # a line continuation
    "$'git' push",
    '$"git" push',
    "g{i,}t push",
    "gi? push",
    "g*t push",
    "[g]it push",
    "${X:-git} push",
    "sh -c '\"$0\" push' git",
    "export GIT_CONFIG_COUNT=1; git p",
    "GIT_DIR=../remote.git git fetch . main",
    "PATH=/tmp/evil git status",
    "X=1",
    "eval ls",
    "source env.sh",
    ". ./env.sh",
    "alias g=git",
    "trap 'ls' EXIT",
    "printf -v PATH /tmp",
    "read PATH",
    "command git status",
    "env GIT_DIR=x git status",
    "sudo ls",
    "timeout 5 ls",
    "xargs ls",
    "find . -exec ls {} +",
    "echo ls | sh",
    "bash < script.sh",
    "bash -s",
    "bash -i -c ls",
    "zsh -c ls",
    "python3 -Bc 'print(1)'",
    "perl -e 'system(1)'",
    "node -e 'x'",
    "echo 'import os' | python3",
    "awk 'BEGIN { system(\"ls\") }'",
    "sed -e '1e ls' f",
    "printf 'ls' > d.sh && sh d.sh",
    "echo ls | tee run.sh; bash ./run.sh",
    "cp x tool && ./tool",
    "awk 'BEGIN { print 1 > \"x.py\" }' && python3 x.py",
    "printf x > m.py; python -m m",
    "echo ls | bash /dev/stdin",
    "echo 'print(1)' | python3 /proc/self/fd/0",
    "echo 'print(1)' | python3 -",
    "tar --to-command=sh -xf a.tar",
    "rsync -e ssh a b:c",
    "curl -X POST https://api.example.com/repos/o/r/git/refs -d x",
    "curl -XPATCH https://api.example.com/x",
    "curl -sSd x https://api.example.com/x",
    "curl --json '{}' https://api.example.com/x",
    "curl -K cfg https://api.example.com/x",
    "wget --post-data=x https://api.example.com/x",
    "wget -e robots=off https://x",
    "http POST https://api.example.com/x a=b",
    "ls `pwd`",
    "ls $(pwd)",
    "ls <(pwd)",
    "(ls)",
    "{ ls; }",
    "if true; then ls; fi",
    "for x in a; do ls; done",
    "time ls",
    "ls # comment",
    "cat ~/.ssh/id_rsa",
    "ls --dir=~",
    "cat <<EOF\nx\nEOF",
    "ls &&",
    "| ls",
    "ls ;; ls",
    "ls \t\x07",
    "echo héllo",
    'echo "a\\b"',
    'echo "!x"',
    "echo 'open",
    'echo "open',
]


CLEAN: list[str] = [
    "ls -la",
    "echo hi > bash_out.txt",
    "git status",
    "git log --oneline -5",
    "git diff HEAD~1",
    "git add -A && git commit -m 'fix: make git push docs clearer'",
    "git commit -m \"update 'git push' section\"",
    "git fetch origin",
    "git pull --ff-only",
    "git branch -D old-feature",
    "git branch -m old new",
    "git branch -f main HEAD~1",
    "git tag v1.0",
    "git tag -d v1.0",
    "git tag -f v1.0",
    "git reset --hard HEAD~1",
    "git rebase -i main",
    "git stash push -m wip",  # "push" is a stash verb here, not git push
    "git remote",
    "git remote -v",
    "git remote show origin",
    "git remote get-url origin",
    "git remote prune origin",
    "git config --get remote.origin.url",
    "git config --get-regexp '^remote\\.'",
    "git config remote.origin.url",
    "git config --list",
    "git config get remote.origin.url",
    "git -C sub status",
    "git",
    "git merge -s ours topic",
    "gh pr view 12",
    "gh pr list --state open",
    "gh pr diff 12",
    "gh pr checks 12",
    "gh pr status",
    "gh pr checkout 12",
    "gh pr",
    "gh release list",
    "gh release view v1",
    "gh release download v1",
    "gh repo view o/r",
    "gh repo clone o/r",
    "gh api repos/o/r/pulls",
    "gh api -X GET search/issues -f q=bug",
    "gh api graphql -f query='query { viewer { login } }'",
    "gh issue list",
    "gh run list",
    "gh workflow list",
    "hub pr list",
    "hub release",
    "hub release show v1",
    "hub api repos/o/r",
    "grep -r 'git push' docs/",
    'rg "gh pr create" .',
    "sh -c 'echo \"git push\"'",
    "bash scripts/test.sh",
    "cat <<< 'hello'",
    "echo ';'",
    "./gitx push",
    "digit push",
    "/usr/bin/git status",
    "curl -sSL https://example.com/x.json",
    "curl -I https://example.com",
    "curl -X GET https://example.com",
    "curl -sS -X HEAD https://example.com",
    "wget -q https://example.com/x.tgz",
    "bash scripts/test.sh && cat out.txt",
    "python -m pytest -q tests/test_x.py",
    "command -v git",
    "ls docs/profile",
    "git log -- .gitignore",
]


@pytest.mark.parametrize(("command", "rule"), RESERVED)
def test_reserved_commands_are_found(command: str, rule: str) -> None:
    finding = find_reserved(command)
    assert finding is not None, command
    assert (finding.code, finding.rule) == ("reserved_command", rule)


@pytest.mark.parametrize("command", CLEAN)
def test_clean_commands_pass(command: str) -> None:
    assert find_reserved(command) is None


@pytest.mark.parametrize(
    ("command", "code"),
    [
        # Intentional changes of issue 15: these were clean before.
        ("git config user.name Bot", "reserved_command"),  # any config write
        ("python -c 'print(1)'", "opaque_command"),  # inline code is eval-like
    ],
)
def test_formerly_clean_commands_are_refused_now(command: str, code: str) -> None:
    finding = find_reserved(command)
    assert finding is not None and finding.code == code


@pytest.mark.parametrize("command", OPAQUE)
def test_commands_outside_the_certain_subset_are_refused(command: str) -> None:
    finding = find_reserved(command)
    assert finding is not None, command
    assert finding.code in ("opaque_command", "unparseable_command", "reserved_command")
    if "git" not in command and "'open" not in command and '"open' not in command:
        assert finding.code == "opaque_command", (command, finding)


@pytest.mark.parametrize(
    ("command", "directories"),
    [
        ("cd sub && make", ("sub",)),
        ("git -C sub status; cd ../x", ("sub", "../x")),
        ("bash -c 'cd a && cd b'", ("a", "b")),
        ("ls", ()),
    ],
)
def test_directories_are_reported_for_the_caller_to_check(
    command: str, directories: tuple[str, ...]
) -> None:
    assessment = assess_command(command)
    assert assessment.finding is None
    assert assessment.directories == directories


@pytest.mark.parametrize(
    ("argv", "reserved"),
    [
        (["/bin/bash", "-lc", "echo hello > hello_shell.txt"], False),
        (["/bin/bash", "-lc", "git push origin"], True),
        (["git", "push"], True),
        (["git", "commit", "-m", "git push; later"], False),
        (["echo", "$(git push)"], False),  # no shell: nothing expands
        (["sh", "-c", "echo $(git push)"], True),
        (["env", "A=1", "gh", "pr", "create"], True),
        (["git", "config", "alias.p", "push", "--get\x00"], True),
        (["sh", "-c", "ls\x00; git push"], True),
    ],
)
def test_argument_vectors_are_read_word_for_word(argv: list[str], reserved: bool) -> None:
    assert (find_reserved(argv) is not None) is reserved


@pytest.mark.parametrize(
    "command",
    ["echo 'unterminated", 'echo "unterminated', "git push 'x", 'sh -c "echo \'x"'],
)
def test_unparseable_quoting_fails_closed(command: str) -> None:
    finding = find_reserved(command)
    assert finding is not None and finding.code == "unparseable_command"


def test_nesting_bound() -> None:
    def nested(levels: int) -> str:
        script = "true"
        for _ in range(levels):
            script = f'echo "$({script})"'
        return script

    # A substitution is opaque now (issue 15); the scan's own bound still names it unparseable.
    finding = find_reserved(nested(MAX_NESTING_DEPTH))
    assert finding is not None and finding.code == "opaque_command"
    finding = find_reserved(nested(MAX_NESTING_DEPTH + 1))
    assert finding is not None and finding.code == "unparseable_command"


def test_length_bound() -> None:
    at_cap = "echo " + "a" * (MAX_COMMAND_CHARS - 5)
    assert len(at_cap) == MAX_COMMAND_CHARS
    assert find_reserved(at_cap) is None
    finding = find_reserved(at_cap + "a")
    assert finding is not None and finding.code == "unparseable_command"
    finding = find_reserved(["echo", "a" * MAX_COMMAND_CHARS])
    assert finding is not None and finding.code == "unparseable_command"


def test_program_word_bound() -> None:
    at_cap = "; ".join(["git status"] * MAX_PROGRAM_WORDS)
    assert find_reserved(at_cap) is None
    finding = find_reserved(at_cap + "; git status")
    assert finding is not None and finding.code == "unparseable_command"


def test_adversarial_nesting_is_bounded() -> None:
    finding = find_reserved("$(" * 20_000)
    assert finding is not None and finding.code == "unparseable_command"
    finding = find_reserved("bash -c " * 5_000)
    assert finding is not None and finding.code == "unparseable_command"


def test_every_rule_is_reachable_and_documented() -> None:
    reached = {rule for _, rule in RESERVED}
    names = [rule.name for rule in RESERVED_RULES]
    assert len(names) == len(set(names))
    assert reached == set(names)
    docs = (Path(__file__).parents[3] / "docs" / "permissions.md").read_text(encoding="utf-8")
    for name in names:
        assert f"`{name}`" in docs, name
