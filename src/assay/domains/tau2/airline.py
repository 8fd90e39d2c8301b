"""tau2's airline domain: flights, users and reservations (``AirlineTools``).

Every tool behaves as tau2's does: same checks in the same order, same error texts,
same changes (including the ones made before a later check fails), same output.
"Now" is tau2's fixed ``2024-05-15T15:00:00``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .airline_models import (
    AirportCode,
    Flight,
    FlightDB,
    Reservation,
    User,
)
from .common import CALCULATE_DOC, TRANSFER_DOC, calculate_expression, doc
from .render import Model
from .store import DbSpec, TableSpec, dump
from .toolkit import Tau2Context, Tau2Toolkit

AIRLINE = Tau2Toolkit(
    "AirlineTools",
    order=(
        "book_reservation",
        "calculate",
        "cancel_reservation",
        "get_reservation_details",
        "get_user_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
        "send_certificate",
        "transfer_to_human_agents",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "get_flight_status",
    ),
)
NOW = "2024-05-15T15:00:00"
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_NUMBERS = (3221322, 3221323, 3221324)

DB_SPEC = DbSpec(
    FlightDB,
    (
        TableSpec("flights", "flight_number", Flight),
        TableSpec("users", "user_id", User),
        TableSpec("reservations", "reservation_id", Reservation),
    ),
    plain=True,
)


def policy(folder: Path) -> str:
    return (folder / "policy.md").read_text(encoding="utf-8")


# --- helpers (AirlineTools' private methods) ---------------------------------------


def get_user(ctx: Tau2Context, user_id: Any) -> dict[str, Any]:
    user = ctx.get("users", user_id)
    if user is None:
        raise ValueError(f"User {user_id} not found")
    return user


def get_reservation(ctx: Tau2Context, reservation_id: Any) -> dict[str, Any]:
    reservation = ctx.get("reservations", reservation_id)
    if reservation is None:
        raise ValueError(f"Reservation {reservation_id} not found")
    return reservation


def get_flight(ctx: Tau2Context, flight_number: Any) -> dict[str, Any]:
    flight = ctx.get("flights", flight_number)
    if flight is None:
        raise ValueError(f"Flight {flight_number} not found")
    return flight


def get_flight_instance(ctx: Tau2Context, flight_number: Any, date: Any) -> dict[str, Any]:
    flight = get_flight(ctx, flight_number)
    if date not in flight["dates"]:
        raise ValueError(f"Flight {flight_number} not found on date {date}")
    return flight["dates"][date]


def _search_direct_flight(
    ctx: Tau2Context, date: Any, origin: Any = None, destination: Any = None, leave_after: Any = None
) -> list[dict[str, Any]]:
    results = []
    for flight in ctx.rows("flights"):
        dates = flight["dates"]
        if (
            (origin is None or flight["origin"] == origin)
            and (destination is None or flight["destination"] == destination)
            and (date in dates)
            and (dates[date]["status"] == "available")
            and (leave_after is None or flight["scheduled_departure_time_est"] >= leave_after)
        ):
            results.append(
                {
                    "flight_number": flight["flight_number"],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "status": "available",
                    "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                    "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
                    "date": None,
                    "available_seats": dict(dates[date]["available_seats"]),
                    "prices": dict(dates[date]["prices"]),
                }
            )
    return results


# --- tools, in AirlineTools' order --------------------------------------------------


@AIRLINE.tool()
@doc(CALCULATE_DOC)
def calculate(ctx: Tau2Context, expression: str) -> str:
    return calculate_expression(expression)


@AIRLINE.tool()
def get_reservation_details(ctx: Tau2Context, reservation_id: str) -> Any:
    """
    Get the details of a reservation.

    Args:
        reservation_id: The reservation ID, such as '8JX2WO'.

    Returns:
        The reservation details.

    Raises:
        ValueError: If the reservation is not found.
    """
    return Model(get_reservation(ctx, reservation_id))


@AIRLINE.tool()
def get_user_details(ctx: Tau2Context, user_id: str) -> Any:
    """
    Get the details of a user, including their reservations.

    Args:
        user_id: The user ID, such as 'sara_doe_496'.

    Returns:
        The user details.

    Raises:
        ValueError: If the user is not found.
    """
    return Model(get_user(ctx, user_id))


_AIRPORTS = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


@AIRLINE.tool()
def list_all_airports(ctx: Tau2Context) -> Any:
    """Returns a list of all available airports.

    Returns:
        A dictionary mapping IATA codes to AirportInfo objects.
    """
    return [Model(dump(AirportCode(iata=iata, city=city))) for iata, city in _AIRPORTS]


@AIRLINE.tool()
def search_direct_flight(ctx: Tau2Context, origin: str, destination: str, date: str) -> Any:
    """
    Search for direct flights between two cities on a specific date.

    Args:
        origin: The origin city airport in three letters, such as 'JFK'.
        destination: The destination city airport in three letters, such as 'LAX'.
        date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.

    Returns:
        The direct flights between the two cities on the specific date.
    """
    return [Model(f) for f in _search_direct_flight(ctx, date=date, origin=origin, destination=destination)]


@AIRLINE.tool()
def search_onestop_flight(ctx: Tau2Context, origin: str, destination: str, date: str) -> Any:
    """
    Search for one-stop flights between two cities on a specific date.

    Args:
        origin: The origin city airport in three letters, such as 'JFK'.
        destination: The destination city airport in three letters, such as 'LAX'.
        date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.

    Returns:
        A list of pairs of DirectFlight objects.
    """
    results = []
    for first in _search_direct_flight(ctx, date=date, origin=origin, destination=None):
        first["date"] = date
        date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
        for second in _search_direct_flight(
            ctx,
            date=date2,
            origin=first["destination"],
            destination=destination,
            leave_after=first["scheduled_arrival_time_est"],
        ):
            second["date"] = date2
            results.append([Model(first), Model(second)])
    return results


@AIRLINE.tool()
@doc(TRANSFER_DOC)
def transfer_to_human_agents(ctx: Tau2Context, summary: str) -> str:
    return "Transfer successful"


@AIRLINE.tool()
def get_flight_status(ctx: Tau2Context, flight_number: str, date: str) -> Any:
    """
    Get the status of a flight.

    Args:
        flight_number: The flight number.
        date: The date of the flight.

    Returns:
        The status of the flight.

    Raises:
        ValueError: If the flight is not found.
    """
    return get_flight_instance(ctx, flight_number, date)["status"]


__all__ = ["AIRLINE", "DB_SPEC", "NOW", "policy"]
