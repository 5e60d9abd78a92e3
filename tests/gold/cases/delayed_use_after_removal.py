"""MemUse 3.3 Credit windows: "Removal of the entry text from the input does not close the window,
because the agent can still act on guidance that it read earlier." The harness drops the search
result that carried the entry before the agent acts on it, five steps after delivery.
"""

from memuse_core.builder import EpisodeBuilder, entry

W = "On the dev VM the RabbitMQ broker listens on port 5673, not 5672."
TASK = (
    "`python -m worker` exits with 'Connection refused' on the dev VM. Make it connect to the local broker."
)


def episode():
    b = EpisodeBuilder("gold-delayed-removed", task=TASK, repo="acme/worker")
    b.step(
        "Search memory.",
        'memory search "worker connection refused broker"',
        "[w-port] " + W,
        tool_memory=([entry("w-port", W)], "search_result"),
    )  # 1
    b.step(
        "Reproduce.",
        "python -m worker",
        "ConnectionRefusedError: [Errno 111] Connection refused (amqp://localhost:5672)",
        exit_code=1,
    )  # 2
    b.step(
        "Read the dev settings.", "cat config/dev.env", "BROKER_URL=amqp://localhost:5672\nLOG_LEVEL=info"
    )  # 3
    b.retract([2, 3])  # the harness trims the old search call and its result
    b.step(
        "Read the worker entry point.",
        "sed -n 1,10p src/worker/__main__.py",
        "import os\n\nurl = os.environ.get('BROKER_URL', 'amqp://localhost:5672')",
    )  # 4
    b.step("Which env files exist?", "ls config", "dev.env\nprod.env")  # 5
    b.step(
        "Compare with prod.", "grep -n BROKER_URL config/prod.env", "1:BROKER_URL=amqp://mq.internal:5672"
    )  # 6
    b.step(
        "Point the dev settings at the local broker's port.",
        "sed -i 's#amqp://localhost:5672#amqp://localhost:5673#' config/dev.env",
        "",
    )  # 7
    b.step(
        "Try again.",
        "set -a; . config/dev.env; python -m worker --check",
        "connected to amqp://localhost:5673; 0 messages queued",
    )  # 8
    b.final("The dev settings point at port 5673; the worker connects.")  # 9
    return b.finish(resolved=True)
