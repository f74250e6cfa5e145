"""An MCPServer (mcp 2.x, formerly FastMCP) whose argument schemas Pydantic writes: Optional, Union,
Literal, nested models, dicts, tuples and recursive types, as Python users
declare them. Used by scripts/fetch_schema_corpus only."""
from __future__ import annotations

from enum import Enum, IntEnum
from typing import Literal, Optional, Union

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

mcp = MCPServer("pydantic-corpus")


class Priority(IntEnum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3


class Color(str, Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str
    city: str = Field(description="The city")
    zip: Optional[str] = None


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float = Field(gt=0)


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


@mcp.tool()
def search(query: str = Field(min_length=1, max_length=200), limit: int = 10, page: Optional[int] = None) -> str:
    """Search with defaults and optionals."""
    return query


@mcp.tool()
def set_priority(priority: Priority, color: Color = Color.RED, mode: Literal["a", "b"] = "a") -> str:
    """Integer and string enums, and a literal."""
    return "ok"


@mcp.tool()
def ship(address: Address, backup: Optional[Address] = None) -> str:
    """Nested models, one optional."""
    return address.city


@mcp.tool()
def tag(labels: dict[str, str], weights: dict[str, float] | None = None) -> str:
    """Dicts."""
    return "ok"


@mcp.tool()
def locate(point: tuple[float, float], span: tuple[int, str] | None = None) -> str:
    """Tuples, homogeneous and not."""
    return "ok"


@mcp.tool()
def draw(shape: Union[Circle, Square], value: Union[int, str] = 0) -> str:
    """Unions of models and of scalars."""
    return "ok"


@mcp.tool()
def plant(tree: Tree) -> str:
    """A recursive model."""
    return tree.label


@mcp.tool()
def schedule(when: str = Field(json_schema_extra={"format": "date-time"}), ids: list[str] = Field(default_factory=list, max_length=5), note: str | None = Field(default=None, pattern="^[a-z]+$")) -> str:
    """Formats, list limits and patterns."""
    return "ok"


if __name__ == "__main__":
    mcp.run()
