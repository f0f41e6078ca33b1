"""Checkers for the notebooks' "Your turn" exercises.

Each checker takes the student's answer, prints what is right or, in words, what is wrong,
and returns True or False. A notebook's TODO cell runs without error even when unsolved,
so the checker explains instead of raising; the notebook's solution cell asserts it passes.
Checkers live in one module per notebook (step01.py ... step15.py).
"""

from __future__ import annotations


def report(problems: list[str], success: str) -> bool:
    """Print the verdict: each problem on its own line, or the success message. True if none."""
    if problems:
        print("Not yet:")
        for problem in problems:
            print(f"  - {problem}")
        return False
    print(f"Correct! {success}")
    return True
