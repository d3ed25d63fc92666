"""One chapter's idea per module, each installed on a core agent as hooks (``feature.install(hooks)``).

    plan          04  the plan, its tool, the plan hook, message discipline, the START note
    delegation    04  planner and executors: the task block, delegate and report, partial-never-done
    coordination  04  the shared-sandbox rules, silent when the agent is alone
    budget        05  warn once near the window's end; warn before the step cap
    filesystem    06  large observations to files (head, tail, path); the filesystem rules; counters
    handoff       --  a task in sessions: the end-of-session ask, the progress file from the run's state
    memory        --  the provider's memory tool on the SDK's class: confined, durable, nothing lost
"""
