"""tau2's airline domain: the tools that change state (``AirlineTools``' write tools)."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from .airline import (
    AIRLINE,
    NEW_CERTIFICATE_NUMBERS,
    NEW_RESERVATION_IDS,
    NOW,
    get_flight,
    get_flight_instance,
    get_reservation,
    get_user,
)
from .airline_models import (
    CabinClass,
    Certificate,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
)
from .common import as_record
from .render import Model
from .store import dump
from .toolkit import Tau2Context


def _payment_for_update(user: dict[str, Any], payment_id: Any, total_price: Any) -> dict[str, Any] | None:
    if payment_id not in user["payment_methods"]:
        raise ValueError("Payment method not found")
    method = user["payment_methods"][payment_id]
    if method["source"] == "certificate":
        raise ValueError("Certificate cannot be used to update reservation")
    elif method["source"] == "gift_card" and method["amount"] < total_price:
        raise ValueError("Gift card balance is not enough")
    if method["source"] == "gift_card":
        method["amount"] -= total_price
    payment = None
    if total_price != 0:
        payment = dump(Payment(payment_id=payment_id, amount=total_price))
    return payment


def _infos(items: Any, model: type[Any]) -> Any:
    """tau2's ``if all(isinstance(x, dict) ...): items = [Model(**x) ...]``."""
    if all(isinstance(x, dict) for x in items):
        return [model(**x) for x in items]
    return items


@AIRLINE.tool(write=True)
def book_reservation(
    ctx: Tau2Context,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: FlightType,
    cabin: CabinClass,
    flights: list[FlightInfo | dict],
    passengers: list[Passenger | dict],
    payment_methods: list[Payment | dict],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Insurance,
) -> Any:
    """
    Book a reservation.

    Args:
        user_id: The ID of the user to book the reservation such as 'sara_doe_496'`.
        origin: The IATA code for the origin city such as 'SFO'.
        destination: The IATA code for the destination city such as 'JFK'.
        flight_type: The type of flight such as 'one_way' or 'round_trip'.
        cabin: The cabin class such as 'basic_economy', 'economy', or 'business'.
        flights: An array of objects containing details about each piece of flight.
        passengers: An array of objects containing details about each passenger.
        payment_methods: An array of objects containing details about each payment method.
        total_baggages: The total number of baggage items to book the reservation.
        nonfree_baggages: The number of non-free baggage items to book the reservation.
        insurance: Whether the reservation has insurance.
    """
    infos: Any = _infos(flights, FlightInfo)
    people: Any = _infos(passengers, Passenger)
    payments: Any = _infos(payment_methods, Payment)
    user = get_user(ctx, user_id)
    reservation_id = next((r for r in NEW_RESERVATION_IDS if ctx.read("reservations", r) is None), None)
    if reservation_id is None:
        raise ValueError("Too many reservations")
    reservation = Reservation(
        reservation_id=reservation_id,
        user_id=user_id,
        origin=origin,
        destination=destination,
        flight_type=flight_type,
        cabin=cabin,
        flights=[],
        passengers=deepcopy(people),
        payment_history=deepcopy(payments),
        created_at=NOW,
        total_baggages=total_baggages,
        nonfree_baggages=nonfree_baggages,
        insurance=insurance,
    )
    total_price: Any = 0
    date_data: list[dict[str, Any]] = []
    for info in infos:
        number = info.flight_number
        flight = get_flight(ctx, number)
        instance = get_flight_instance(ctx, number, info.date)
        if instance["status"] != "available":
            raise ValueError(f"Flight {number} not available on date {info.date}")
        if instance["available_seats"][cabin] < len(people):
            raise ValueError(f"Not enough seats on flight {number}")
        price = instance["prices"][cabin]
        reservation.flights.append(
            ReservationFlight(
                origin=flight["origin"],
                destination=flight["destination"],
                flight_number=number,
                date=info.date,
                price=price,
            )
        )
        date_data.append(instance)
        total_price += price * len(people)
    if insurance == "yes":
        total_price += 30 * len(people)
    total_price += 50 * nonfree_baggages
    for method in payments:
        payment_id, amount = method.payment_id, method.amount
        if payment_id not in user["payment_methods"]:
            raise ValueError(f"Payment method {payment_id} not found")
        saved = user["payment_methods"][payment_id]
        if saved["source"] in {"gift_card", "certificate"} and saved["amount"] < amount:
            raise ValueError(f"Not enough balance in payment method {payment_id}")
    total_payment = sum(method.amount for method in payments)
    if total_payment != total_price:
        raise ValueError(
            f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}"
        )
    for method in payments:
        saved = user["payment_methods"][method.payment_id]
        if saved["source"] == "gift_card":
            saved["amount"] -= method.amount
        elif saved["source"] == "certificate":
            user["payment_methods"].pop(method.payment_id)
    for instance in date_data:
        instance["available_seats"][cabin] -= len(people)
    record = ctx.put("reservations", reservation_id, dump(reservation))
    get_user(ctx, user_id)["reservations"].append(reservation_id)
    return Model(record)


@AIRLINE.tool(write=True)
def cancel_reservation(ctx: Tau2Context, reservation_id: str) -> Any:
    """
    Cancel the whole reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'.

    Returns:
        The updated reservation.

    Raises:
        ValueError: If the reservation is not found.
    """
    reservation = get_reservation(ctx, reservation_id)
    refunds = [
        dump(Payment(payment_id=p["payment_id"], amount=-p["amount"])) for p in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return Model(reservation)


@AIRLINE.tool(write=True)
def send_certificate(ctx: Tau2Context, user_id: str, amount: int) -> Any:
    """
    Send a certificate to a user. Be careful!

    Args:
        user_id: The ID of the user to book the reservation, such as 'sara_doe_496'.
        amount: The amount of the certificate to send.

    Returns:
        A message indicating the certificate was sent.

    Raises:
        ValueError: If the user is not found.
    """
    user = get_user(ctx, user_id)
    for payment_id in [f"certificate_{n}" for n in NEW_CERTIFICATE_NUMBERS]:
        if payment_id not in user["payment_methods"]:
            certificate = Certificate(id=payment_id, amount=amount, source="certificate")
            user["payment_methods"][payment_id] = dump(certificate)
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    raise ValueError("Too many certificates")


@AIRLINE.tool(write=True)
def update_reservation_baggages(
    ctx: Tau2Context, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> Any:
    """
    Update the baggage information of a reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'
        total_baggages: The updated total number of baggage items included in the reservation.
        nonfree_baggages: The updated number of non-free baggage items included in the reservation.
        payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.

    Returns:
        The updated reservation.

    Raises:
        ValueError: If the reservation is not found.
        ValueError: If the user is not found.
        ValueError: If the payment method is not found.
        ValueError: If the certificate cannot be used to update reservation.
        ValueError: If the gift card balance is not enough.
    """
    reservation = get_reservation(ctx, reservation_id)
    user = get_user(ctx, reservation["user_id"])
    total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    payment = _payment_for_update(user, payment_id, total_price)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["total_baggages"] = as_record(total_baggages)
    reservation["nonfree_baggages"] = as_record(nonfree_baggages)
    return Model(reservation)


@AIRLINE.tool(write=True)
def update_reservation_flights(
    ctx: Tau2Context,
    reservation_id: str,
    cabin: CabinClass,
    flights: list[FlightInfo | dict],
    payment_id: str,
) -> Any:
    """
    Update the flight information of a reservation.


    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'.
        cabin: The cabin class of the reservation
        flights: An array of objects containing details about each piece of flight in the ENTIRE new reservation. Even if the a flight segment is not changed, it should still be included in the array.
        payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.

    Returns:
        The updated reservation.

    Raises:
        ValueError: If the reservation is not found.
        ValueError: If the user is not found.
        ValueError: If the payment method is not found.
        ValueError: If the certificate cannot be used to update reservation.
        ValueError: If the gift card balance is not enough.
    """
    infos: Any = _infos(flights, FlightInfo)
    reservation = get_reservation(ctx, reservation_id)
    user = get_user(ctx, reservation["user_id"])
    n_passengers = len(reservation["passengers"])
    total_price: Any = 0
    new_flights: list[Any] = []
    for info in infos:
        kept = next(
            (
                f
                for f in reservation["flights"]
                if f["flight_number"] == info.flight_number
                and f["date"] == info.date
                and cabin == reservation["cabin"]
            ),
            None,
        )
        if kept:
            total_price += kept["price"] * n_passengers
            new_flights.append(kept)
            continue
        flight = get_flight(ctx, info.flight_number)
        instance = get_flight_instance(ctx, info.flight_number, info.date)
        if instance["status"] != "available":
            raise ValueError(f"Flight {info.flight_number} not available on date {info.date}")
        if instance["available_seats"][cabin] < n_passengers:
            raise ValueError(f"Not enough seats on flight {info.flight_number}")
        segment = dump(
            ReservationFlight(
                flight_number=info.flight_number,
                date=info.date,
                price=instance["prices"][cabin],
                origin=flight["origin"],
                destination=flight["destination"],
            )
        )
        total_price += segment["price"] * n_passengers
        new_flights.append(segment)
    total_price -= sum(f["price"] for f in reservation["flights"]) * n_passengers
    payment = _payment_for_update(user, payment_id, total_price)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["flights"] = new_flights
    reservation["cabin"] = as_record(cabin)
    return Model(reservation)


@AIRLINE.tool(write=True)
def update_reservation_passengers(
    ctx: Tau2Context,
    reservation_id: str,
    passengers: list[Passenger | dict],
) -> Any:
    """
    Update the passenger information of a reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'.
        passengers: An array of objects containing details about each passenger.

    Returns:
        The updated reservation.

    Raises:
        ValueError: If the reservation is not found.
        ValueError: If the number of passengers does not match.
    """
    people: Any = _infos(passengers, Passenger)
    reservation = get_reservation(ctx, reservation_id)
    if len(people) != len(reservation["passengers"]):
        raise ValueError("Number of passengers does not match")
    reservation["passengers"] = [as_record(p) for p in people]
    return Model(reservation)
