"""tau2's mock domain: users with tasks (``MockTools``) and a user-side inbox of
notifications (``MockUserTools``), the smallest dual-control domain."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .common import TRANSFER_DOC, as_record, doc
from .render import Model
from .store import DbSpec, TableSpec, dump
from .toolkit import Tau2Context, Tau2Toolkit

TaskStatus = Literal["pending", "completed"]
NotificationStatus = Literal["unread", "read"]


class Task(BaseModel):
    task_id: str = Field(description="Unique identifier for the task")
    title: str = Field(description="Title of the task")
    description: str | None = Field(None, description="Description of the task")
    status: TaskStatus = Field(description="Status of the task")


class User(BaseModel):
    user_id: str = Field(description="Unique identifier for the user")
    name: str = Field(description="User's name")
    tasks: list[str] = Field(description="List of task IDs assigned to the user")


class MockDB(BaseModel):
    """Simple database with users and their tasks."""

    model_config = ConfigDict(extra="forbid")

    tasks: dict[str, Task] = Field(description="Dictionary of all tasks indexed by task ID")
    users: dict[str, User] = Field(description="Dictionary of all users indexed by user ID")


class Notification(BaseModel):
    """A notification in the user's inbox."""

    model_config = ConfigDict(extra="forbid")

    notification_id: str = Field(description="Unique identifier for the notification")
    message: str = Field(description="The notification message")
    status: NotificationStatus = Field(default="unread", description="Whether the notification has been read")
    task_id: str | None = Field(None, description="Associated task ID, if applicable")


class MockUserDB(BaseModel):
    """Simple user database with a notification inbox."""

    model_config = ConfigDict(extra="forbid")

    notifications: dict[str, Notification] = Field(default_factory=dict)


MOCK = Tau2Toolkit("MockTools")
MOCK_USER = Tau2Toolkit("MockUserTools", caller="user")
DB_SPEC = DbSpec(
    MockDB, (TableSpec("tasks", "task_id", Task), TableSpec("users", "user_id", User)), plain=True
)
USER_DB_SPEC = DbSpec(MockUserDB, (TableSpec("notifications", "notification_id", Notification),), plain=True)


def policy(folder: Path) -> str:
    return (folder / "policy.md").read_text(encoding="utf-8")


@MOCK.tool(write=True)
def create_task(ctx: Tau2Context, user_id: str, title: str, description: str = None) -> Any:  # type: ignore[assignment]  # noqa: RUF013 (tau2's schema)
    """
    Create a new task for a user.

    Args:
        user_id: The ID of the user creating the task
        title: The title of the task
        description: Optional description of the task

    Returns:
        The created task

    Raises:
        ValueError: If the user is not found
    """
    user = ctx.get("users", user_id)
    if user is None:
        raise ValueError(f"User {user_id} not found")
    task_id = f"task_{len(list(ctx.rows('tasks'))) + 1}"
    task = ctx.put(
        "tasks", task_id, dump(Task(task_id=task_id, title=title, description=description, status="pending"))
    )
    user["tasks"].append(task_id)
    return Model(task)


@MOCK.tool()
def get_users(ctx: Tau2Context) -> Any:
    """
    Get all users in the database.
    """
    return [Model(user) for user in ctx.rows("users")]


@MOCK.tool(write=True)
def update_task_status(ctx: Tau2Context, task_id: str, status: TaskStatus) -> Any:
    """
    Update the status of a task.

    Args:
        task_id: The ID of the task to update
        status: The new status of the task

    Returns:
        The updated task

    Raises:
        ValueError: If the task is not found
    """
    task = ctx.get("tasks", task_id)
    if task is None:
        raise ValueError(f"Task {task_id} not found")
    task["status"] = as_record(status)
    return Model(task)


@MOCK.function
def assert_number_of_tasks(ctx: Tau2Context, user_id: str, expected_number: int) -> bool:
    """The user has ``expected_number`` tasks."""
    user = ctx.get("users", user_id)
    if user is None:
        raise ValueError(f"User {user_id} not found")
    return len(user["tasks"]) == expected_number


@MOCK.function
def assert_task_status(ctx: Tau2Context, task_id: str, expected_status: TaskStatus) -> bool:
    """The task's status is ``expected_status``."""
    task = ctx.get("tasks", task_id)
    if task is None:
        raise ValueError(f"Task {task_id} not found")
    return task["status"] == expected_status


@MOCK.tool()
@doc(TRANSFER_DOC)
def transfer_to_human_agents(ctx: Tau2Context, summary: str) -> str:
    return "Transfer successful"


@MOCK_USER.tool()
def check_notifications(ctx: Tau2Context) -> Any:
    """Check all notifications in the user's inbox.

    Returns:
        A list of all notifications.
    """
    return [Model(n) for n in ctx.rows("notifications")]


@MOCK_USER.tool(write=True)
def dismiss_notification(ctx: Tau2Context, notification_id: str) -> str:
    """Dismiss (mark as read) a notification.

    Args:
        notification_id: The ID of the notification to dismiss.

    Returns:
        A confirmation message.

    Raises:
        ValueError: If the notification is not found.
    """
    notification = ctx.get("notifications", notification_id)
    if notification is None:
        raise ValueError(f"Notification {notification_id} not found")
    notification["status"] = "read"
    return f"Notification {notification_id} dismissed"


@MOCK_USER.function
def add_notification(ctx: Tau2Context, notification_id: str, message: str, task_id: str | None = None) -> Any:
    """Add a notification to the user's inbox (used by initialization_actions)."""
    notification = dump(Notification(notification_id=notification_id, message=message, task_id=task_id))
    return Model(ctx.put("notifications", notification_id, notification))


@MOCK_USER.function
def assert_notification_status(ctx: Tau2Context, notification_id: str, expected_status: str) -> bool:
    """The notification's status is ``expected_status``."""
    notification = ctx.get("notifications", notification_id)
    if notification is None:
        raise ValueError(f"Notification {notification_id} not found")
    return notification["status"] == expected_status


__all__ = ["DB_SPEC", "MOCK", "MOCK_USER", "USER_DB_SPEC", "policy"]
