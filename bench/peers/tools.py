"""The peers' copies of Skillet's built-in tools, as plain Python functions.

Same names, descriptions (the docstrings), parameters and results as `calculator` and
`word_count` in engine/src/tools/builtin.rs, so every system offers the model the same tools and
the model sees the same tool results.
"""

import ast
import operator

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.BitXor: operator.pow,  # `^` is a power, as in Skillet's calculator
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _evaluate(node):
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    raise ValueError("only numbers, + - * / % ^ and parentheses are allowed")


def calculator(expression: str) -> dict:
    """Evaluates an arithmetic expression (+ - * / % ^, parentheses) and returns the number."""
    try:
        tree = ast.parse(expression, mode="eval")
        result = _evaluate(tree)
    except (SyntaxError, ZeroDivisionError, OverflowError) as e:
        raise ValueError(f"cannot evaluate {expression!r}: {e}") from None
    if result != result or result in (float("inf"), float("-inf")):
        raise ValueError(f"cannot evaluate {expression!r}: the result is not a finite number")
    # Integral results are integers, as Skillet's calculator answers them.
    if result.is_integer() and abs(result) < 2**53:
        result = int(result)
    return {"expression": expression, "result": result}


def word_count(text: str) -> dict:
    """Counts the words, lines and characters of a text."""
    return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}


BY_NAME = {"calculator": calculator, "word_count": word_count}
